"""Renderers of the acceptance run document: JSON, JUnit XML, terminal table, PDF certificate.

Each is a function of the typed run document (`acceptance.document.RunDocument`, results.json)
and, for the certificate, the bundle's manifest; none of them computes a verdict.
"""
