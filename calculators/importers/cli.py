"""`slakit import lanl | csv`: convert other incident-log shapes to slakit's CSV."""

from __future__ import annotations

import click

from calculators.cli import zone_given, zone_option
from slaschema.cliconv import extra_output, output_option

LANL_ZONE = "America/Denver"        # the zone of the LANL table's local times (Los Alamos)


def _read(path: str) -> str:
    """The input file as text: a regular file only (a FIFO or device would hang), within the
    size limit (`--max-file-size`); InputError otherwise. UTF-8, or UTF-16 or UTF-32 as a
    spreadsheet's "Unicode text" saves an export (known by its byte-order mark, or by the NULs
    of its first line; `safefiles.wide_encoding`)."""
    from slaschema.safefiles import check_cli_file, read_regular, wide_encoding

    check_cli_file(path, "export")                  # no /proc, /sys, /dev, FIFO or device
    data = read_regular(path, what="input")
    wide = wide_encoding(data)
    if wide is not None:
        return data.decode(wide[1], errors="replace").removeprefix("\ufeff")
    return data.decode("utf-8-sig", errors="replace")


def _report_skipped(result) -> None:
    for p in result.skipped:
        click.echo(f"skipped: {p.format()}", err=True)


def _write(frame, out: str) -> None:
    from calculators.importers.common import to_csv_text, write_csv

    if out == "-":
        click.echo(to_csv_text(frame), nl=False)
    else:
        write_csv(frame, out)


@click.group("import")
def import_group() -> None:
    """Convert incident logs from other systems into slakit's incident-log CSV."""


@import_group.command("lanl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@output_option(dest="out", default="-", show_default=True, fixed="csv", help="Incident-log CSV to write ('-': stdout)")
@click.option("--inventory-out", type=click.Path(dir_okay=False), callback=extra_output("csv"),
              help="Also write the inventory CSV (node,rack,cluster,site,gpus; *.csv) for a contract's "
                   "`topology.inventory`")
@zone_option(help=f"Zone of the table's local times (they carry no offset). Default: {LANL_ZONE}.")
@click.option("--nodes-per-rack", type=click.IntRange(1, 100_000), default=32, show_default=True,
              help="The table has no racks: group this many consecutive node numbers per rack")
@click.option("--gpus-per-node", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Capacity units per node written to the inventory")
@click.option("--site", default="lanl", show_default=True, help="Site id for every system")
@click.option("--skip-bad-rows", is_flag=True, help="Leave bad rows out (listed on stderr) instead of failing")
@click.option("--service-windows", is_flag=True, help="Write in_service_from/in_service_to to the inventory from "
              "the table's `node prod` and `node decom` months (contract format revision 1.1)")
def import_lanl(file: str, out: str, inventory_out: str | None, tz: str | None, tz_alias: str | None,
                nodes_per_rack: int, gpus_per_node: int, site: str, skip_bad_rows: bool,
                service_windows: bool) -> None:
    """Convert the LANL HPC failure table (LA-UR-05-7318) FILE.

    System -> cluster s<System>, nodenum -> node s<System>-n<num>, Prob Started/Fixed (local
    time in --assume-tz) -> start/end in UTC, the cause columns -> cause. Exit 1 on bad rows.
    """
    from calculators.cli import check_zone_option
    from calculators.importers.lanl import convert_lanl
    from slaschema.fileio import write_atomic

    tz = check_zone_option(zone_given(tz, tz_alias) or LANL_ZONE)
    # an InputError is printed, exit 1 (slaschema.cli.report_input_errors)
    result = convert_lanl(_read(file), tz=tz, file=file, nodes_per_rack=nodes_per_rack,
                          gpus_per_node=gpus_per_node, site=site, skip_bad_rows=skip_bad_rows,
                          service_windows=service_windows)
    _report_skipped(result)
    _write(result.incidents, out)
    if inventory_out:
        assert result.inventory is not None
        from slaschema.textsafe import csv_frame

        write_atomic(inventory_out, csv_frame(result.inventory).to_csv(index=False, lineterminator="\n"))
    inv = result.inventory
    click.echo(f"{len(result.incidents)} incidents, {len(inv) if inv is not None else 0} nodes in "
               f"{inv['cluster'].nunique() if inv is not None else 0} systems; {len(result.skipped)} rows skipped",
               err=True)


@import_group.command("csv")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--map", "map_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Column-mapping YAML (see examples/ticket-map.yaml)")
@output_option(dest="out", default="-", show_default=True, fixed="csv", help="Incident-log CSV to write ('-': stdout)")
@click.option("--skip-bad-rows", is_flag=True, help="Leave bad rows out (listed on stderr) instead of failing")
def import_csv(file: str, map_file: str, out: str, skip_bad_rows: bool) -> None:
    """Convert a ticket-system CSV export FILE using the column map --map."""
    from calculators.importers.tickets import convert_tickets, load_map

    cmap = load_map(map_file)               # an InputError is printed, exit 1 (report_input_errors)
    result = convert_tickets(_read(file), cmap, file=file, skip_bad_rows=skip_bad_rows)
    _report_skipped(result)
    _write(result.incidents, out)
    click.echo(f"{len(result.incidents)} incidents; {len(result.skipped)} rows skipped", err=True)


@import_group.command("slurm-events")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--live", is_flag=True, help="Run `sacctmgr -P show event` now instead of reading FILE.")
@click.option("--since", default="2000-01-01T00:00:00", show_default=True, metavar="TIME",
              help="With --live: events from this Slurm time on.")
@click.option("--cluster", default=None, help="Only this cluster's events (the Cluster column).")
@zone_option()
@output_option(dest="out", default="-", show_default=True, fixed="csv", help="Incident-log CSV to write ('-': stdout)")
def import_slurm_events(file: str | None, live: bool, since: str, cluster: str | None, tz: str | None,
                        tz_alias: str | None, out: str) -> None:
    """Convert Slurm's node events (`sacctmgr -P show event` output in FILE, or --live) into an
    incident log with the rules of `slakit watch`: a node is out while its state carries DOWN,
    DRAIN or FAIL; the reason is the cause; overlapping events of a node are one incident.
    """
    from calculators.cli import check_zone_option as _check_zone
    from calculators.importers.slurm_events import events_csv, parse_events, sacctmgr_events
    from slaschema.cliconv import write_output

    if bool(file) == bool(live):
        raise click.UsageError("give FILE (saved `sacctmgr -P show event` output) or --live")
    zone = _check_zone(zone_given(tz, tz_alias))
    # an InputError (bad events, an unwritable -o) is printed, exit 1 (slaschema.cli.report_input_errors)
    text = sacctmgr_events(since) if live else _read(file)
    imp = parse_events(text, zone, file=file or "sacctmgr show event (live)", cluster=cluster)
    csv_text = events_csv(imp)
    if out == "-":
        click.echo(csv_text, nl=False)
    else:
        write_output(out, csv_text)
    click.echo(f"{len(imp.incidents)} incidents from {imp.events_out} out-of-service events "
               f"({imp.events_read} node events read)", err=True)


def register(group: click.Group) -> None:
    group.add_command(import_group)
