"""Renderers of the acceptance run document: JSON, JUnit XML, terminal table, PDF certificate.

Each is a function of the run document (results.json) and, for the PDF, the bundle's
manifest; none of them computes a verdict.
"""
