"""The claims ledger: a CSV the team keeps in its repository, one row per contract and month.

Columns (header required, order free; see docs/claims.md):

    contract         contract id (contract.id)
    month            YYYY-MM, the measured month
    amount_claimed   decimal, the credit claimed (the letter's amount; for a month that lapsed
                     unclaimed, the credit that was owed)
    currency         ISO 4217 code
    due              ISO 8601 instant the claim is due (empty: no deadline)
    filed            YYYY-MM-DD the claim was sent (empty: not filed yet)
    reference        the provider's case or ticket number (optional)
    answer           pending | accepted | partial | rejected (empty: pending once filed)
    amount_accepted  decimal the provider accepted (accepted: defaults to amount_claimed)
    amount_paid      decimal credited or paid so far (empty: 0)
    paid_on          YYYY-MM-DD of the last payment or credit note (optional)
    note             free text

`slakit claim --ledger FILE` adds the months it claims (filed empty); the team fills in
`filed`, `answer` and the amounts as the claim goes on. `status_rows(...)` derives, as of an
instant, each row's state and the amount still outstanding:

    to_file   not filed, deadline ahead (due_soon within 7 days)  outstanding = claimed
    lapsed    not filed and the deadline passed                     outstanding = 0, lost = claimed
    awaiting  filed, no answer yet                                  outstanding = claimed - paid
    accepted  accepted (or partly) and not fully paid               outstanding = accepted - paid
    paid      accepted and paid in full                             outstanding = 0
    rejected  rejected                                              outstanding = 0, disputed = claimed - paid

Filed after the deadline is flagged `filed_late` (the provider may refuse it).
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from slaschema.errors import InputError, Problem

COLUMNS = ("contract", "month", "amount_claimed", "currency", "due", "filed", "reference", "answer",
           "amount_accepted", "amount_paid", "paid_on", "note")
REQUIRED = ("contract", "month", "amount_claimed")
ANSWERS = ("pending", "accepted", "partial", "rejected")
DUE_SOON_SECONDS = 7 * 86400
ZERO = Decimal("0.00")


@dataclass(frozen=True)
class LedgerRow:
    line: int                        # 1-based data row (header excluded)
    contract: str
    month: str
    amount_claimed: Decimal
    currency: str
    due: int | None
    filed: date | None
    reference: str
    answer: str
    amount_accepted: Decimal | None
    amount_paid: Decimal
    paid_on: date | None
    note: str

    def to_csv(self) -> dict[str, str]:
        from calculators.result import iso

        return {"contract": self.contract, "month": self.month, "amount_claimed": f"{self.amount_claimed:.2f}",
                "currency": self.currency, "due": iso(self.due) if self.due is not None else "",
                "filed": self.filed.isoformat() if self.filed else "", "reference": self.reference,
                "answer": self.answer if self.filed else "",
                "amount_accepted": f"{self.amount_accepted:.2f}" if self.amount_accepted is not None else "",
                "amount_paid": f"{self.amount_paid:.2f}" if self.amount_paid else "",
                "paid_on": self.paid_on.isoformat() if self.paid_on else "", "note": self.note}


def _money(text: str) -> Decimal:
    v = Decimal(text.strip())
    if not v.is_finite() or v < 0:
        raise InvalidOperation
    return v.quantize(Decimal("0.01"))


def read_ledger(path: str | Path) -> list[LedgerRow]:
    """Every row of the ledger, or `InputError` with every problem (file, line, column, value, fix)."""
    from calculators.periods import PeriodError, parse_month

    p = Path(path)
    file = str(path)
    if not p.exists():
        raise InputError([Problem("file_not_found", "no such claims ledger", file=file,
                                  fix="create it with `slakit claim ... --ledger FILE` or write the header "
                                      + ",".join(COLUMNS))])
    from slaschema.safefiles import decode_utf8, read_regular
    from slaschema.textsafe import csv_uncell

    text = decode_utf8(read_regular(p, shown=file, what="claims ledger"), shown=file, what="claims ledger")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise InputError([Problem("ledger_unreadable", f"not a CSV file ({exc})", file=file, line=1,
                                  fix="the header is " + ",".join(COLUMNS))]) from None
    problems: list[Problem] = []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError([Problem("ledger_missing_column", f"the ledger has no column {', '.join(missing)}",
                                  file=file, line=1, fix="the header is " + ",".join(COLUMNS))])
    for c in header:
        if c not in COLUMNS:
            problems.append(Problem("ledger_unknown_column", f"unknown column {c!r}", file=file, line=1, value=c,
                                    fix="columns are " + ", ".join(COLUMNS)))
    rows: list[LedgerRow] = []
    seen: dict[tuple[str, str], int] = {}
    # months and deadlines repeat from row to row: each distinct text is read once
    month_ok = _memo(lambda text: _is_month(text, parse_month, PeriodError))
    due_of = _memo(_due)
    for line, raw in _rows(reader, file):
        get = {c: csv_uncell((raw.get(c) or "").strip()) for c in COLUMNS}    # as write_ledger was given it
        bad = len(problems)

        def err(code: str, col: str, msg: str, fix: str) -> None:
            problems.append(Problem(code, msg, file=file, row=line, column=col, value=get[col] or None, fix=fix))

        if not get["contract"]:
            err("ledger_missing_value", "contract", "contract id is empty", "write the contract's id")
        if not month_ok(get["month"]):
            err("ledger_month_invalid", "month", "not a month", "write YYYY-MM, e.g. 2027-02")
        amounts: dict[str, Decimal | None] = {}
        for col in ("amount_claimed", "amount_accepted", "amount_paid"):
            if not get[col]:
                amounts[col] = None
                if col == "amount_claimed":
                    err("ledger_missing_value", col, "amount_claimed is empty", "write the amount claimed, e.g. 4115.80")
                continue
            try:
                amounts[col] = _money(get[col])
            except (InvalidOperation, ValueError):
                err("ledger_amount_invalid", col, "not an amount", "write a plain non-negative amount such as 4115.80")
        dates: dict[str, date | None] = {}
        for col in ("filed", "paid_on"):
            dates[col] = None
            if get[col]:
                try:
                    dates[col] = date.fromisoformat(get[col])
                except ValueError:
                    err("ledger_date_invalid", col, "not a date", "write YYYY-MM-DD")
        due = None
        if get["due"]:
            due = due_of(get["due"])
            if due is None:
                err("ledger_due_invalid", "due", "not an ISO 8601 instant with an offset between the years 1900 "
                    "and 9998", "write e.g. 2027-03-31T05:00:00Z (as `slakit claim --ledger` does)")
        answer = get["answer"].lower()
        if answer and answer not in ANSWERS:
            err("ledger_answer_invalid", "answer", "unknown answer", "use one of " + ", ".join(ANSWERS))
        if answer and answer != "pending" and dates.get("filed") is None and not get["filed"]:
            err("ledger_answer_without_filing", "answer", f"answer {answer!r} on a claim that was not filed",
                "fill in `filed` with the date the claim was sent")
        if answer == "partial" and get["amount_accepted"] == "":
            err("ledger_accepted_missing", "amount_accepted", "a partial answer needs the amount accepted",
                "write the amount the provider accepted")
        claimed, accepted, paid = amounts.get("amount_claimed"), amounts.get("amount_accepted"), amounts.get("amount_paid")
        if claimed is not None and accepted is not None and accepted > claimed:
            err("ledger_accepted_exceeds", "amount_accepted", f"accepted {accepted} is more than claimed {claimed}",
                "check the amounts")
        cap = accepted if accepted is not None else claimed
        if paid is not None and cap is not None and paid > cap:
            err("ledger_paid_exceeds", "amount_paid", f"paid {paid} is more than {'accepted' if accepted is not None else 'claimed'} {cap}",
                "check the amounts")
        key = (get["contract"], get["month"])
        if key in seen:
            err("ledger_duplicate_row", "month", f"{key[0]} {key[1]} is already in row {seen[key]}",
                "keep one row per contract and month")
        seen.setdefault(key, line)
        if len(problems) > bad:
            continue
        rows.append(LedgerRow(line=line, contract=get["contract"], month=get["month"], amount_claimed=claimed or ZERO,
                              currency=get["currency"], due=due, filed=dates["filed"], reference=get["reference"],
                              answer=answer or "pending", amount_accepted=accepted, amount_paid=paid or ZERO,
                              paid_on=dates["paid_on"], note=get["note"]))
    if problems:
        raise InputError(problems)
    return rows


def _memo(fn):
    cache: dict[str, Any] = {}

    def get(text: str) -> Any:
        try:
            return cache[text]
        except KeyError:
            value = cache[text] = fn(text)
            return value
    return get


def _is_month(text: str, parse_month, error) -> bool:
    try:
        parse_month(text, "UTC")
    except error:
        return False
    return True


def _due(text: str) -> int | None:
    """Epoch seconds of an aware ISO 8601 instant between the years 1900 and 9998 (in UTC);
    None for anything else."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if t.tzinfo is None or not 1900 <= t.astimezone(timezone.utc).year <= 9998:   # shown in any zone later
            return None
        return int(t.timestamp())
    except (ValueError, OverflowError):
        return None


def _rows(reader: csv.DictReader, file: str):
    """(data row number, row) of the ledger; a row the csv module cannot read (a field over its
    size limit, a stray quote at the end) is `ledger_unreadable` with its line."""
    line = 0
    while True:
        try:
            raw = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError([Problem("ledger_unreadable", f"the CSV cannot be read ({exc})", file=file,
                                      line=reader.line_num, fix="check the quoting and the length of that row")]) from None
        line += 1
        yield line, raw


def write_ledger(path: str | Path, rows: list[LedgerRow]) -> None:
    from slaschema.fileio import write_atomic

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    from slaschema.textsafe import csv_exact

    for r in sorted(rows, key=lambda r: (r.contract, r.month)):      # read back with csv_uncell (read_ledger)
        w.writerow({k: csv_exact(v) for k, v in r.to_csv().items()})
    write_atomic(path, buf.getvalue())


def record_claims(path: str | Path, run) -> tuple[int, int]:
    """Add (or, while not yet filed, update) a row per month of `run` with a credit owed: the
    claimed months, and the lapsed ones so the ledger shows what was lost. Returns (added,
    updated); rows already filed are left as they are."""
    rows = read_ledger(path) if Path(path).is_file() else []
    index = {(r.contract, r.month): k for k, r in enumerate(rows)}
    added = updated = 0
    for m in run.months:
        if m.credit <= 0:
            continue
        note = "" if m.claimable else "lapsed before it was claimed"
        new = LedgerRow(line=0, contract=run.contract_id, month=m.period, amount_claimed=m.credit,
                        currency=run.currency, due=m.due, filed=None, reference="", answer="pending",
                        amount_accepted=None, amount_paid=ZERO, paid_on=None, note=note)
        k = index.get((run.contract_id, m.period))
        if k is None:
            rows.append(new)
            added += 1
        elif rows[k].filed is None:
            old = rows[k]
            rows[k] = LedgerRow(**{**old.__dict__, "amount_claimed": m.credit, "currency": run.currency,
                                   "due": m.due, "note": old.note or note})
            updated += 1
    write_ledger(path, rows)
    return added, updated


@dataclass(frozen=True)
class StatusRow:
    contract: str
    month: str
    currency: str
    amount_claimed: Decimal
    due: int | None
    due_source: str                  # contract | ledger | none
    filed: date | None
    state: str                       # to_file | lapsed | awaiting | accepted | paid | rejected
    flags: tuple[str, ...]           # due_soon, filed_late
    outstanding: Decimal
    lost: Decimal                    # lapsed before filing
    disputed: Decimal                # claimed but rejected or not accepted
    reference: str
    zone: str = "UTC"                # the contract's zone (UTC when no contract was given)

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "month": self.month, "currency": self.currency,
                "amount_claimed": f"{self.amount_claimed:.2f}", "due": _iso(self.due) if self.due is not None else None,
                "due_source": self.due_source, "filed": self.filed.isoformat() if self.filed else None,
                "state": self.state, "flags": list(self.flags), "outstanding": f"{self.outstanding:.2f}",
                "lost": f"{self.lost:.2f}", "disputed": f"{self.disputed:.2f}", "reference": self.reference}


@functools.lru_cache(maxsize=65536)
def _iso(epoch: int) -> str:
    """`calculators.result.iso`, once per deadline (deadlines repeat from row to row)."""
    from calculators.result import iso

    return iso(epoch)


def _filed_late(filed: date, due: int, zone: str) -> bool:
    """Filed on a day that starts at or after the due instant (a date is filed at its local start)."""
    from zoneinfo import ZoneInfo

    try:
        start = int(datetime(filed.year, filed.month, filed.day, tzinfo=ZoneInfo(zone)).timestamp())
    except (OverflowError, ValueError):          # year 1 or 9999 in a zone off UTC
        return filed.year >= 9999
    return start >= due


def status_rows(rows: list[LedgerRow], as_of: int, contracts: dict[str, Any] | None = None) -> list[StatusRow]:
    """Each ledger row's state as of `as_of`. `contracts` (id -> LoadedContract) supply the
    deadline from the contract's `credits.claim_window` and the zone for filing dates; rows of
    other contracts keep the ledger's `due` (and UTC)."""
    from calculators.claims import due_instant
    from calculators.periods import parse_month

    out = []
    for r in rows:
        lc = (contracts or {}).get(r.contract)
        zone = lc.model.contract.timezone if lc is not None else "UTC"
        due, source = r.due, "ledger" if r.due is not None else "none"
        if lc is not None:
            due = due_instant(parse_month(r.month, zone), lc.model.credits.claim_window)
            source = "contract" if due is not None else "none"
        flags: list[str] = []
        lost = disputed = ZERO
        claimed, paid = r.amount_claimed, r.amount_paid
        if r.filed is None:
            if due is not None and as_of >= due:
                state, outstanding, lost = "lapsed", ZERO, claimed
            else:
                state, outstanding = "to_file", claimed
                if due is not None and due - as_of <= DUE_SOON_SECONDS:
                    flags.append("due_soon")
        else:
            if due is not None and _filed_late(r.filed, due, zone):
                flags.append("filed_late")
            if r.answer == "pending":
                state, outstanding = "awaiting", max(claimed - paid, ZERO)
            elif r.answer == "rejected":
                state, outstanding, disputed = "rejected", ZERO, max(claimed - paid, ZERO)
            else:
                accepted = r.amount_accepted if r.amount_accepted is not None else claimed
                outstanding = max(accepted - paid, ZERO)
                disputed = max(claimed - accepted, ZERO)
                state = "paid" if outstanding == 0 else "accepted"
        out.append(StatusRow(contract=r.contract, month=r.month, currency=r.currency, amount_claimed=claimed,
                             due=due, due_source=source, filed=r.filed, state=state, flags=tuple(flags),
                             outstanding=outstanding, lost=lost, disputed=disputed, reference=r.reference,
                             zone=zone))
    return sorted(out, key=lambda s: (s.contract, s.month))


def totals(rows: list[StatusRow]) -> dict[str, dict[str, str]]:
    """Per currency: outstanding, of which still to file, awaiting the provider's answer, and
    accepted but not paid; lost to lapsed windows; disputed."""
    out: dict[str, dict[str, Decimal]] = {}
    for s in rows:
        t = out.setdefault(s.currency or "?", {k: ZERO for k in ("outstanding", "to_file", "awaiting", "accepted_unpaid",
                                                                 "lost", "disputed")})
        t["outstanding"] += s.outstanding
        t["to_file"] += s.outstanding if s.state == "to_file" else ZERO
        t["awaiting"] += s.outstanding if s.state == "awaiting" else ZERO
        t["accepted_unpaid"] += s.outstanding if s.state == "accepted" else ZERO
        t["lost"] += s.lost
        t["disputed"] += s.disputed
    return {cur: {k: f"{v:.2f}" for k, v in t.items()} for cur, t in sorted(out.items())}


def now_utc() -> int:
    return int(datetime.now(timezone.utc).timestamp())
