"""`slakit compare`: competing offers side by side, best term for the buyer marked per row.

`terms.term_rows` reads comparable values from contracts (each row with its rule);
`report.comparison` adds lint counts and simulated figures; renderers write a terminal
table, JSON, Markdown and PDF from that one document.
"""
