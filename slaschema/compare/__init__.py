"""`slakit compare`: competing offers side by side, best term for the buyer marked per row.

`terms.term_rows` reads comparable values from contracts (each row with its rule);
`calculators.reports.compare.comparison` adds lint counts and simulated figures (it needs the
calculators) and renders that one document as a terminal table, JSON, Markdown and PDF.
"""
