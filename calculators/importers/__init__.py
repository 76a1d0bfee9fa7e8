"""Importers: other incident-log shapes -> slakit's incident-log CSV (and an inventory).

- `lanl`: the public LANL HPC failure table (release LA-UR-05-7318).
- `tickets`: any ticket-system CSV export, mapped by a small column-mapping YAML.
"""
