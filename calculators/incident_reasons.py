"""The reason codes of the incident-log loader, in one place.

Every problem `load_incidents` and `IncidentLog.from_records` report carries one of these
codes in brackets; scripts and tests match on the code, never on the wording. The page
`docs/incident-log-codes.md` is generated from this list:

    .venv/bin/python -m calculators.incident_reasons > docs/incident-log-codes.md

(a test checks that the page and this list agree).
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """A reason code with what it means (`doc`) and whether it blocks (`severity`)."""

    doc: str
    severity: str
    scope: str

    def __new__(cls, value: str, doc: str, scope: str = "row", severity: str = "error") -> Reason:
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.doc = doc
        obj.scope = scope
        obj.severity = severity
        return obj

    # the file itself: raised even with --skip-bad-rows
    FILE_NOT_FOUND = "file_not_found", "the incident log path does not name a file", "file"
    EMPTY_LOG = "empty_log", ("the file has no content at all (an error); a log with a header and no rows "
                              "is read as no incidents, with this code as a warning"), "file"
    LOG_ENCODING = "log_encoding", ("the file is UTF-16 or UTF-32 text (as Excel's \"Unicode text\" saves it), "
                                    "not UTF-8"), "file"
    NOT_A_LOG = "not_a_log", ("the file is a compressed file (gzip, bzip2, xz, zstd), a ZIP archive or .xlsx "
                              "workbook, a PDF, or a slakit contract named in the log's place"), "file"
    CSV_INVALID = "csv_invalid", ("the CSV cannot be read: a row has more cells than the header, or the "
                                  "quoting is broken (a quoted cell runs over lines that read as incident "
                                  "rows, or an id, scope, target or time cell holds a line break)"), "file"
    JSON_INVALID = "json_invalid", ("a JSON Lines line is not a JSON object, or a JSON array is not an array "
                                    "of objects"), "file"
    JSON_DUPLICATE_KEY = "json_duplicate_key", ("an object of a JSON log gives a key twice (or two keys the same "
                                                "but for white space around them): readers disagree on which "
                                                "value counts"), "file"
    MISSING_COLUMN = "missing_column", "a required column (id, scope, target, start) is not in the header", "file"
    DUPLICATE_COLUMN = "duplicate_column", "a column name appears more than once in the header", "file"
    UNKNOWN_TIMEZONE = "unknown_timezone", "the zone given to --assume-tz is not an IANA time zone name", "file"
    LOG_TOO_LARGE = "log_too_large", ("the file does not fit in the memory there is to read it into (a log is "
                                      "read whole): split it, by month or by site"), "file"
    HOSTLIST_TOO_LARGE = "hostlist_too_large", ("the hostlists of the node rows name more nodes together than "
                                                "the node budget (read with no contract, `slakit reconcile OURS "
                                                "THEIRS`: all the node rows do); raise it with `slakit "
                                                "--max-nodes N`"), "file"
    # one row and column
    MISSING_ID = "missing_id", "the incident id is empty"
    DUPLICATE_ID = "duplicate_id", "the incident id is already used by an earlier row (every later row is reported)"
    MISSING_VALUE = "missing_value", ("a required cell is empty (scope, target, start; gpus_affected of a degraded "
                                      "incident when the contract counts degraded time proportionally)")
    TIMESTAMP_INVALID = "timestamp_invalid", ("the cell is not an ISO 8601 timestamp, names a day or hour that does "
                                              "not exist, or (with --assume-tz) a local time skipped or repeated "
                                              "by a daylight-saving change")
    TIMESTAMP_NAIVE = "timestamp_naive", "the timestamp has no UTC offset (write Z or +hh:mm, or pass --assume-tz)"
    END_BEFORE_START = "end_before_start", "end is earlier than start"
    UNKNOWN_SCOPE = "unknown_scope", "scope is not node, rack, cluster or site"
    UNKNOWN_TARGET = "unknown_target", ("the target is not a unit of that scope in the contract's topology, or a "
                                        "node hostlist that does not parse or names unknown nodes")
    UNKNOWN_IMPACT = "unknown_impact", "impact is not down or degraded"
    UNKNOWN_SEVERITY = "unknown_severity", "severity is not sev1, sev2, sev3 or sev4"
    GPUS_AFFECTED_RANGE = "gpus_affected_range", ("gpus_affected is not a whole number between 1 and the GPUs per "
                                                  "node of the target")
    # warnings: never block
    UNKNOWN_COLUMN = "unknown_column", "a column that is not part of the format; it is ignored", "file", "warning"
    ID_HIDDEN_CHARACTERS = "id_hidden_characters", ("incident ids hold characters a terminal or viewer does not "
                                                    "show as themselves (control, bidi, zero-width, ...): two such "
                                                    "ids can look the same; the rows are named and the outputs show "
                                                    "the characters as <U+hhhh> or \\u escapes"), "file", "warning"
    SHORT_ROW = "short_row", ("rows have fewer cells than the header (a line cut short, or cut off at the end of "
                              "the file): the cells missing are read as empty (an end missing reads as an open "
                              "incident, counted until as_of), and the rows are named"), "file", "warning"
    NOT_UTF8 = "not_utf8", ("lines of the file hold bytes that are not UTF-8 (a log saved as Latin-1 or "
                            "Windows-1252): they are read as U+FFFD, the replacement character, and the lines "
                            "are named"), "file", "warning"


# the codes --skip-bad-rows leaves out with their rows (the others stop the command even then)
ROW_REASONS = frozenset(r.value for r in Reason if r.scope == "row")

# codes the loader does not raise itself but a command reading a log reports for it: the
# path's checks (`slaschema.safefiles`) and the engine's time range (`calculators.engine`)
OTHER_CODES = (
    ("path_forbidden", "the path", "the log is named under /proc, /sys or /dev (or is a link there): not read"),
    ("not_a_regular_file", "the path", "the log is a FIFO, a device or a socket: not read (nothing waits on it)"),
    ("log_out_of_range", "row", "an incident time before 1970-01-02 or after 9997-12-31 UTC, or the log's own "
                                "times spanning 270 years or more (the row at the end of the span farther from "
                                "the period is named): credits are computed for neither"),
)


def markdown() -> str:
    """The docs page: every code, where it applies, and what it means."""
    lines = [
        "# Incident log reason codes",
        "",
        "Every problem found in an incident log is printed with its location (file, row, column),",
        "the value found, a fix, and one of these codes in brackets. All problems are reported at",
        "once; the command exits 1 and writes nothing. With `--skip-bad-rows` the rows with",
        "row-level problems are left out and listed in the output; file-level problems still stop.",
        "",
        "Generated from `calculators/incident_reasons.py`",
        "(`python -m calculators.incident_reasons > docs/incident-log-codes.md`).",
        "",
        "| code | applies to | severity | meaning |",
        "|---|---|---|---|",
    ]
    for r in Reason:
        lines.append(f"| `{r.value}` | {r.scope} | {r.severity} | {r.doc} |")
    lines += ["", "Reported for a log by the commands that read one (the path's checks and the engine), not by",
              "the loader itself:", "", "| code | applies to | severity | meaning |", "|---|---|---|---|"]
    for code, scope, doc in OTHER_CODES:
        lines.append(f"| `{code}` | {scope} | error | {doc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
