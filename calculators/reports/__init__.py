"""Documents that leave slakit: the SLA schedule, the SLA review (PDF, Markdown, HTML).

Shared building blocks for any report:
    calculators.reports.doc   Document and its blocks (Heading, Para, Table, BarChart, Heatmap, ...)
    calculators.reports.pdf   render_pdf(document) -> bytes, plus styles/table/chart flowables
    calculators.reports.text  render_markdown(document), render_html(document)
    calculators.reports.fmt   money, percentages, durations for display
"""
