"""The period options of every command that asks for a period, in one place.

`--month YYYY-MM`, `--quarter YYYY-Qn` and `--period YYYY-MM|YYYY-Qn` share one option type
(`PeriodText`), one help text and one set of error codes: a value that is not a period is a
usage error `[period_invalid]` (or `[period_out_of_range]`), naming no period where one is
needed `[period_missing]`, naming more than one where one is asked `[period_conflict]`.
The command receives `periods`: the labels in the order given (quarters as `YYYY-Qn`).
"""

from __future__ import annotations

import functools

import click

from calculators.periods import COMPUTED, FIRST_MONTH, FIRST_QUARTER, PeriodError, outside_computed, parse_month, \
    parse_quarter

HELP = {
    "month": "A month, YYYY-MM (e.g. 2027-02).",
    "quarter": "A quarter, YYYY-Qn (e.g. 2027-Q1): its three months, each computed on its own.",
    "period": "A month YYYY-MM or a quarter YYYY-Qn.",
}
METAVAR = {"month": "YYYY-MM", "quarter": "YYYY-Qn", "period": "YYYY-MM|YYYY-Qn"}


class PeriodText(click.ParamType):
    """A period label: `month`, `quarter` or `period` (either); checked, normalised to
    `YYYY-MM` / `YYYY-Qn`. Month bounds depend on the contract's zone and are computed later."""

    name = "period"

    def __init__(self, kind: str = "period") -> None:
        if kind not in METAVAR:
            raise ValueError(f"kind must be one of {sorted(METAVAR)}")
        self.kind = kind

    def get_metavar(self, param, *args, **kwargs) -> str:  # click 8.1 and 8.2 signatures
        return METAVAR[self.kind]

    def convert(self, value, param, ctx):
        text = str(value).strip()
        kind = self.kind
        if kind == "period":
            kind = "quarter" if "q" in text.lower() else "month"
        try:
            if kind == "quarter":
                months = parse_quarter(text, "UTC")
                label = f"{months[0].label[:4]}-Q{(int(months[0].label[5:7]) - 1) // 3 + 1}"
            else:
                months = [parse_month(text, "UTC")]
                label = months[0].label
        except PeriodError as e:
            if self.kind == "month" and "q" in text.lower():
                e = PeriodError(f"{text[:40]!r} is a quarter; this option takes a month, YYYY-MM [period_invalid]")
            elif "[period_out_of_range]" in str(e):
                e = self._out_of_range(text, kind)
            self.fail(str(e), param, ctx)
        if outside_computed(months[0].label, months[-1].label):
            self.fail(str(self._out_of_range(text, kind)), param, ctx)
        return label

    @staticmethod
    def _out_of_range(text: str, kind: str) -> PeriodError:
        """A period outside the months the engine computes (`calculators.periods.COMPUTED`)."""
        first = FIRST_QUARTER if kind == "quarter" else FIRST_MONTH
        return PeriodError(f"{text[:40]!r} is outside the computed periods; {COMPUTED}. "
                           f"Name a {kind} in that range (such as {first}) [period_out_of_range]")


MONTH = PeriodText("month")
QUARTER = PeriodText("quarter")
PERIOD = PeriodText("period")

_NAMES = ("month", "quarter", "period")


def _words(quarter: bool) -> str:
    return ("--month YYYY-MM, --quarter YYYY-Qn or --period YYYY-MM|YYYY-Qn" if quarter
            else "--month YYYY-MM or --period YYYY-MM")


def period_options(*, many: bool = False, quarter: bool = True, required: bool = True, help: str | None = None):
    """Add `--month`, `--quarter` (unless `quarter=False`) and `--period`; the command gets `periods`.

    `many`: several may be given (each repeatable) and their months are joined; otherwise exactly
    one period. `required=False`: none at all gives `periods == ()` (the command's default).
    """
    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            given = [(name, v) for name in _NAMES for v in (kwargs.pop(f"{name}_labels", None) or ())]
            if not given and required:
                raise click.UsageError(f"name the {'months' if many else 'period'}: {_words(quarter)} "
                                       "[period_missing]")
            if len(given) > 1 and not many:
                shown = ", ".join(f"--{n} {v}" for n, v in given)
                raise click.UsageError(f"name one period, not {shown}: {_words(quarter)} [period_conflict]")
            kwargs["periods"] = tuple(v for _, v in given)
            return f(*args, **kwargs)

        extra = " Repeatable; the months of all are joined." if many else ""
        opts = [("period", PeriodText("period" if quarter else "month"))]
        if quarter:
            opts.append(("quarter", QUARTER))
        opts.append(("month", MONTH))
        for name, ptype in opts:           # applied bottom-up: help lists --month, --quarter, --period
            text = HELP[name] if quarter or name != "period" else HELP["month"]
            if name == "period" and help:
                text += " " + help
            wrapper = click.option(f"--{name}", f"{name}_labels", type=ptype, multiple=True,
                                   metavar=METAVAR[name] if quarter or name != "period" else METAVAR["month"],
                                   help=text + extra)(wrapper)
        return wrapper

    return decorate
