"""`slakit claim`: the letters read back (PDF and Markdown), the evidence package, signatures."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from tests.reports.conftest import EXAMPLE, ROOT, pdf_text

LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
AS_OF = "2027-04-03T00:00:00Z"
needs_ssh = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) not installed")


def _slakit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slakit", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def engine_march():
    """The engine's own figures for 2027-03, to check the letter against."""
    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(EXAMPLE)
    log = load_incidents(LOG, lc)
    res = compute(lc, log, ["2027-03"], as_of=datetime(2027, 4, 3, tzinfo=timezone.utc), incidents=True)
    return lc, log, res.to_json(include_incidents=True)


@pytest.fixture(scope="module")
def monitor_and_reconcile(tmp_path_factory):
    """A buyer's monitor log in the `slakit watch` format, and the reconcile report against the provider's log."""
    d = tmp_path_factory.mktemp("buyer")
    ours = d / "watch.csv"
    with open(LOG, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["scope"] == "node" and r["start"].startswith("2027-03")]
    with open(ours, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["id", "scope", "target", "start", "end", "impact", "category", "cause",
                                           "detected_at"], lineterminator="\n")
        w.writeheader()
        for r in rows[:-1]:        # one incident the monitor did not see: a disagreement to report
            w.writerow({"id": "w-" + r["id"], "scope": "node", "target": r["target"], "start": r["start"],
                        "end": r["end"], "impact": "down", "category": "unplanned", "cause": "slurm: down",
                        "detected_at": r["start"]})
    out = _slakit("reconcile", str(ours), str(LOG), "--period", "2027-03", "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    report = d / "reconcile.json"
    report.write_text(out.stdout)
    assert json.loads(out.stdout)
    return ours, report


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen (openssh-client) not installed")
    d = tmp_path_factory.mktemp("key")
    k = d / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "claims@customer.example", "-f", str(k)],
                   check=True)
    (d / "allowed_signers").write_text("claims@customer.example " + (d / "id_ed25519.pub").read_text())
    return k, d / "allowed_signers"


@pytest.fixture(scope="module")
def quarter(tmp_path_factory, monitor_and_reconcile, key):
    d = tmp_path_factory.mktemp("claim")
    ours, report = monitor_and_reconcile
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF, "-o", str(d / "claim.pdf"),
                  "--monitor-log", str(ours), "--reconcile", str(report), "--sign", str(key[0]))
    assert out.returncode == 0, out.stderr
    return d, out.stdout


def _letter_pages(pdf: bytes) -> list[str]:
    from pypdf import PdfReader

    return [re.sub(r"\s+", " ", p.extract_text() or "") for p in PdfReader(io.BytesIO(pdf)).pages]


def test_cli_summary(quarter):
    _, stdout = quarter
    assert "no --monitor-log was given" not in stdout
    assert "USD 4,115.80 claimed" in stdout
    assert "2027-01: USD 69,638.40 lapsed, not claimed" in stdout
    assert "2027-03: USD 4,115.80 claimed, open" in stdout


def test_one_letter_for_the_open_month_addressed_to_send_to(quarter, engine_march):
    d, _ = quarter
    pages = _letter_pages((d / "claim.pdf").read_bytes())
    letters = [p for p in pages if "Claim for 20" in p]
    assert len(letters) >= 1 and all("Claim for 2027-03" in p for p in letters)
    text = " ".join(pages)
    assert "Claim for 2027-01" not in text and "Claim for 2027-02" not in text
    _, _, doc = engine_march
    credit = Decimal(doc["periods"][0]["credit_total"])
    assert f"Claim for 2027-03: USD {credit:,.2f}" in text
    assert "To sla-claims@provider.example" in text
    assert "Contract example-gb200-2027" in text
    assert "Claim due before 2027-05-01 00:00 CDT (30d after the end of the measured month" in text
    assert f"Credit owed: the amount claimed (USD) {credit:,.2f}" in text
    assert "The contract asks for: incident timestamps; affected nodes; customer monitoring logs." in text


def test_clauses_are_numbered_as_in_the_schedule(quarter, tmp_path):
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    out = _slakit("draft", str(EXAMPLE), "-o", str(tmp_path / "s.md"))
    assert out.returncode == 0, out.stderr
    schedule = (tmp_path / "s.md").read_text()
    for number, title in (("5.1", "Node availability"), ("5.2", "Rack availability"), ("6", "How credits are settled"),
                          ("3", "What counts as down"), ("4", "Exclusions")):
        assert re.search(rf"^#+ {re.escape(number)}\.? {title}$", schedule, re.M), (number, title)
        assert f'§{number} "{title}"' in text, (number, title)


def test_incidents_of_credited_units_with_ticket_nodes_times_and_credit(quarter, engine_march):
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    lc, log, doc = engine_march
    period = doc["periods"][0]
    credited = [u for u in period["units"] if Decimal(u["credit"]) > 0]
    ids = {i for u in credited for i in u["incidents"]}
    assert ids, "the example month has credited units"
    tickets = dict(zip(log.frame["id"], log.frame["ticket"]))
    for inc in doc["incidents"]:
        if inc["id"] in ids:
            assert inc["id"] in text
            assert tickets[inc["id"]] in text
    for u in credited:
        assert f"{u['scope']} {u['id']}" in text and u["credit"] in text.replace(",", "")
    others = [i["id"] for i in doc["incidents"] if i["id"] not in ids]
    assert f"{len(others)} other incidents in 2027-03 count in no unit with a credit" in text
    # INC-27052: a node incident 2027-03-10 10:00-18:00 CST, 8 h counted, on r04-n14
    assert re.search(r"INC-27052 ND-\d+ r04-n14 \(degraded\) 2027-03-10 10:00 CST 2027-03-10 18:00 CST 8h 8h "
                     r"node r04-n14", text)
    # a cluster-wide incident lists the nodes it took down as hostlists
    assert "r01-n[01-18], r02-n[01-18], r03-n[01-18], r04-n[01-18] (72 nodes)" in text


def test_incident_table_headers_and_durations_are_not_broken_inside_a_word(quarter):
    """The 6.5 pt incident table: its column headers and durations stay whole words (the
    'Counted' header once broke as 'Counte' over 'd')."""
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    assert ("Incident Provider ticket Affected nodes Start End Counted Down Credited units it counts in (USD) "
            "INC-27046") in text
    assert "1h 30m 1h 30m node r04-n14" in text and "6h 58m 6h 58m node r01-n05" in text


def test_a_degraded_incident_is_marked_and_its_down_time_explained(quarter, engine_march):
    """INC-27052 took 3 of r04-n14's 4 GPUs for 8 h: the contract (degraded: proportional) counts
    6 h of it, so the letter's '8h' Down must not read as the node's downtime."""
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    lc, _, doc = engine_march
    assert lc.model.downtime.degraded == "proportional"
    r04 = next(u for u in doc["periods"][0]["units"] if u["scope"] == "node" and u["id"] == "r04-n14")
    hours = Decimal(doc["periods"][0]["hours"])
    down_h = (1 - Decimal(r04["availability_pct"]) / 100) * hours
    assert Decimal("7.5") < down_h < Decimal("7.6")       # 6 h degraded + 0.375 h of INC-27053 + 72 min, not 10 h 42 m
    assert "r04-n14 (degraded) 2027-03-10" in text
    assert text.count("(degraded)") == 1 + 1                # INC-27052 and the note
    assert ("An incident marked (degraded) took only some of its node's GPUs: its Counted and Down are the whole "
            "degraded stretch, of which the node accrues as downtime only the share of its GPUs lost (GPUs affected / "
            'GPUs of the node; §3 "What counts as down" (downtime)).') in text


def test_evidence_the_contract_asks_for_and_the_package_lacks_is_said_on_the_letter(quarter, tmp_path):
    """The example contract asks for customer monitoring logs; without --monitor-log the letter
    itself (not only a note on stderr) says they are not enclosed."""
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF,
                  "-o", str(tmp_path / "claim.pdf"))
    assert out.returncode == 0, out.stderr
    assert "no --monitor-log was given" in out.stderr
    text = pdf_text((tmp_path / "claim.pdf").read_bytes())
    said = ("Not enclosed: customer monitoring logs, which the contract asks for with a claim: the package holds no "
            "monitoring log of Example AI Lab's own.")
    assert said in text
    assert text.index("It holds:") < text.index(said) < text.index("Figures computed by slakit")
    d, _ = quarter                                        # given a monitor log: nothing is said missing
    assert "Not enclosed" not in pdf_text((d / "claim.pdf").read_bytes())


def test_months_not_claimed_say_why(quarter):
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    assert ("2027-01: not claimed. The claim was due before 2027-03-03 00:00 CST (30d after the end of the measured "
            "month") in text
    assert "the window has closed, so the credit of USD 69,638.40 has lapsed" in text
    assert "2027-02: not claimed. The claim was due before 2027-03-31 01:00 CDT" in text


def test_markdown_letter_says_the_same(quarter, tmp_path):
    d, _ = quarter
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF, "-o", str(tmp_path / "c.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "c.md").read_text()
    pdf = pdf_text((d / "claim.pdf").read_bytes())
    for needle in ("Claim for 2027-03: USD 4,115.80", "sla-claims@provider.example", "INC-27052", "ND-49636",
                   "2027-01: not claimed.", '§5.1 "Node availability"'):
        assert needle in md and needle in pdf, needle
    assert "The manifest is not signed." in md


def _members(tar_path: Path) -> dict[str, bytes]:
    with tarfile.open(tar_path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_package_holds_rows_logs_and_a_manifest(quarter, monitor_and_reconcile, engine_march):
    import hashlib

    d, _ = quarter
    pkg = _members(d / "claim.evidence.tar")
    ours, report = monitor_and_reconcile
    assert set(pkg) == {"claim.json", "contract/gb200-contract.yaml", "incidents/gb200-incidents-2027Q1.csv",
                        "incidents/claimed.csv", "monitor/watch.csv", "reconcile/reconcile.json", "manifest.json",
                        "manifest.json.sig"}
    manifest = json.loads(pkg["manifest.json"])
    assert manifest["format"] == "slakit-claim-evidence/1" and manifest["months"] == ["2027-03"]
    for name, digest in manifest["files"].items():
        assert hashlib.sha256(pkg[name]).hexdigest() == digest, name
    assert set(manifest["files"]) == set(pkg) - {"manifest.json", "manifest.json.sig"}
    assert pkg["monitor/watch.csv"] == ours.read_bytes()
    assert pkg["reconcile/reconcile.json"] == report.read_bytes()
    assert "monitor/watch.csv: the customer's own availability monitoring log" in \
        pdf_text((d / "claim.pdf").read_bytes())
    # the log rows of every incident touching the claimed month, values as in the provider's log
    _, _, doc = engine_march
    touching = {i["id"] for i in doc["incidents"]}
    with open(LOG, newline="") as fh:
        original = [r for r in csv.reader(fh)]
    got = list(csv.reader(io.StringIO(pkg["incidents/gb200-incidents-2027Q1.csv"].decode())))
    assert got[0] == original[0]
    assert got[1:] == [r for r in original[1:] if r[0] in touching]
    # the letter names the manifest digest
    text = pdf_text((d / "claim.pdf").read_bytes())
    assert hashlib.sha256(pkg["manifest.json"]).hexdigest() in text.replace(" ", "")
    claim = json.loads(pkg["claim.json"])
    assert claim["format"] == "slakit-claim/1" and claim["claimed_total"] == "4115.80"


@needs_ssh
def test_signature_verifies_with_stock_openssh_and_tampering_is_caught(quarter, key, tmp_path):
    d, _ = quarter
    _, allowed = key
    pkg = _members(d / "claim.evidence.tar")
    (tmp_path / "manifest.json").write_bytes(pkg["manifest.json"])
    (tmp_path / "manifest.json.sig").write_bytes(pkg["manifest.json.sig"])
    ok = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", "claims@customer.example", "-n",
                         "slakit-evidence", "-s", str(tmp_path / "manifest.json.sig")],
                        input=pkg["manifest.json"], capture_output=True)
    assert ok.returncode == 0, ok.stderr
    out = _slakit("claim", "verify", str(d / "claim.evidence.tar"), "--allowed-signers", str(allowed),
                  "--identity", "claims@customer.example")
    assert out.returncode == 0 and "signature verifies" in out.stdout, out.stderr
    # change one row of the incident file: the manifest no longer matches
    bad = tmp_path / "bad.tar"
    with tarfile.open(d / "claim.evidence.tar") as src, tarfile.open(bad, "w") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if m.name == "incidents/claimed.csv":
                data = data.replace(b"28800", b"38800")
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
    out = _slakit("claim", "verify", str(bad))
    assert out.returncode == 1 and "incidents/claimed.csv: changed" in out.stderr
    # a signature by another key is refused when the signer is named
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    wrong = tmp_path / "wrong_signers"
    wrong.write_text("claims@customer.example " + (tmp_path / "other.pub").read_text())
    out = _slakit("claim", "verify", str(d / "claim.evidence.tar"), "--allowed-signers", str(wrong),
                  "--identity", "claims@customer.example")
    assert out.returncode == 1 and "[signature_invalid]" in out.stderr


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.DIRTYPE])
def test_a_member_that_is_no_file_is_a_problem(quarter, tmp_path, kind):
    # a symbolic link to /etc/passwd (or a hard link, device, folder) beside the evidence was
    # skipped, and the package "matched the manifest": `tar xf` makes it all the same
    from calculators.claim_package import verify

    d, _ = quarter
    bad = tmp_path / "bad.tar"
    shutil.copy(d / "claim.evidence.tar", bad)
    with tarfile.open(bad, "a") as t:
        m = tarfile.TarInfo("incidents/extra")
        m.type = kind
        m.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else "claim.json"
        t.addfile(m)
    problems = verify(bad.read_bytes(), file=str(bad))
    assert len(problems) == 1 and problems[0].startswith("incidents/extra: a ") and \
        problems[0].endswith("[member_not_a_file]"), problems
    out = _slakit("claim", "verify", str(bad))
    assert out.returncode == 1 and "[member_not_a_file]" in out.stderr, out.stdout + out.stderr


def test_a_manifest_without_files_is_invalid(tmp_path):
    # `files` missing was read as listing nothing: a package of a bare manifest "matched"
    from calculators.claim_package import verify
    from slaschema.errors import InputError

    pkg = tmp_path / "p.tar"
    with tarfile.open(pkg, "w") as t:
        data = b'{"format": "slakit-claim-evidence/1"}'
        m = tarfile.TarInfo("manifest.json")
        m.size = len(data)
        t.addfile(m, io.BytesIO(data))
    with pytest.raises(InputError) as exc:
        verify(pkg.read_bytes(), file=str(pkg))
    assert exc.value.codes == ["manifest_invalid"]


def test_package_is_byte_identical_across_runs(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-03", "--as-of", AS_OF,
                      "-o", str(tmp_path / name / "claim.pdf"))
        assert out.returncode == 0, out.stderr
        # the contract asks for customer monitoring logs and none was given: said, not hidden
        assert "asks for 'customer monitoring logs' and no --monitor-log was given" in out.stderr
    for name in ("claim.evidence.tar", "claim.pdf"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_expired_month_alone_is_not_claimed_and_no_package(tmp_path):
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-01", "--as-of", AS_OF, "-o", str(tmp_path / "j.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "j.md").read_text()
    assert "Claim for 2027-01" not in md
    assert "2027-01: not claimed. The claim was due before 2027-03-03 00:00 CST" in md
    assert not (tmp_path / "j.evidence.tar").exists()
    assert "USD 0.00 claimed" in out.stdout


def test_due_soon_month_is_claimed(tmp_path):
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-01", "--as-of", "2027-03-01T00:00:00Z",
                  "-o", str(tmp_path / "j.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "j.md").read_text()
    assert "Claim for 2027-01: USD 69,638.40" in md
    assert "claim due soon" in md


def test_month_not_ended_is_refused(tmp_path):
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-03", "--as-of", "2027-03-20T00:00:00Z",
                  "-o", str(tmp_path / "x.pdf"))
    assert out.returncode == 2
    assert "2027-03 has not ended" in out.stderr
    assert not (tmp_path / "x.pdf").exists()


def test_missing_key_writes_nothing(tmp_path):
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-03", "--as-of", AS_OF, "-o", str(tmp_path / "x.pdf"),
                  "--sign", str(tmp_path / "no-such-key"))
    assert out.returncode == 1
    assert "[signing_key_not_found]" in out.stderr and "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_not_charged_amounts_are_shown_when_the_result_carries_them(engine_march):
    """A result with hours not charged (revision 1.1): shown beside the claim, never added to it."""
    import dataclasses

    from calculators.claim_case import _amounts, claim_months
    from calculators.reports.claim_letter import LetterInputs, claim_document
    from calculators.reports.text import render_markdown

    from calculators.engine import compute

    lc, log, doc = engine_march
    month_totals = compute(lc, log, ["2027-03"], as_of=datetime(2027, 4, 3, tzinfo=timezone.utc)).month_totals()[0]
    period = dataclasses.replace(month_totals, not_charged_total=Decimal("112.00"),
                                 remedy_total=month_totals.credit_total + Decimal("112.00"))
    amounts = _amounts(period)
    assert amounts["not_charged"] == "112.00" and amounts["credit_total"] == doc["periods"][0]["credit_total"]
    assert Decimal(amounts["remedy"]) == period.credit_total + Decimal("112.00")
    assert _amounts(month_totals)["not_charged"] is None
    run = claim_months(lc, log, ["2027-03"], datetime(2027, 4, 3, tzinfo=timezone.utc))
    assert run.months[0].totals == month_totals and run.months[0].credit == month_totals.credit_total
    month = dataclasses.replace(run.months[0], totals=period)
    run = dataclasses.replace(run, months=(month,))
    md = render_markdown(claim_document(lc, run, LetterInputs("gb200-contract.yaml", "test", "2027-03")))
    assert "Hours not charged (a billing adjustment on the invoice, not part of this claim) | 112.00" in md
    assert f"Remedy for the month (credit owed + not charged) | {Decimal(amounts['remedy']):,.2f}" in md
    assert f"Credit owed: the amount claimed (USD) | {period.credit_total:,.2f}" in md.replace("**", "")


def test_contract_without_claim_instructions(tmp_path):
    text = EXAMPLE.read_text()
    start = text.index("  claim:\n")
    end = text.index("  form:", start)
    c = tmp_path / "c.yaml"
    c.write_text(text[:start] + text[end:])
    shutil.copy(ROOT / "examples" / "gb200-inventory.csv", tmp_path)
    out = _slakit("claim", str(c), str(LOG), "--month", "2027-03", "--as-of", AS_OF, "-o", str(tmp_path / "c.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "c.md").read_text()
    assert "the contract names no claim address: credits.claim" in md
    assert "The contract names no evidence to send with a claim" in md


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_log_rows_follow_the_loaders_row_numbers(tmp_path, suffix):
    """Rows picked by the loader's row numbers, blank CSV lines and all, in the log's own format."""
    from calculators.claim_package import log_rows
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(EXAMPLE)
    with open(LOG, newline="") as fh:
        records = list(csv.DictReader(fh))[:6]
    path = tmp_path / f"log{suffix}"
    if suffix == ".csv":
        lines = LOG.read_text().splitlines()[:7]
        path.write_text("\n".join(lines[:3] + [""] + lines[3:]) + "\n")     # a blank line after the 2nd row
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if v}) + "\n" for r in records))
    else:
        path.write_text(json.dumps([{k: v for k, v in r.items() if v} for r in records]))
    log = load_incidents(path, lc)
    wanted = {"INC-27003", "INC-27005"}
    rows = set(log.frame.loc[log.frame["id"].isin(wanted), "row"].tolist())
    data = log_rows(path, rows).decode()
    if suffix == ".csv":
        got = [r["id"] for r in csv.DictReader(io.StringIO(data))]
    elif suffix == ".jsonl":
        got = [json.loads(x)["id"] for x in data.splitlines()]
    else:
        got = [x["id"] for x in json.loads(data)]
    assert got == sorted(wanted)


def test_long_node_lists_are_cut_with_their_count():
    from calculators.reports.claim_letter import MAX_NODE_GROUPS, _nodes_text

    nodes = tuple(f"c1-r{r:03d}-n{n:02d}" for r in range(1, 21) for n in range(1, 19))
    text = _nodes_text(nodes, "cluster", "c1")
    assert text.startswith("cluster c1: c1-r001-n[01-18], c1-r002-n[01-18]")
    assert text.endswith(f"and {20 - MAX_NODE_GROUPS + 1} more groups (360 nodes)")
    assert _nodes_text(nodes[:36], "rack", "r1") == "c1-r001-n[01-18], c1-r002-n[01-18] (36 nodes)"
    assert _nodes_text(("n1",), "node", "n1") == "n1"


def test_letter_never_says_a_unit_missed_a_target_it_met(quarter, engine_march):
    d, _ = quarter
    text = pdf_text((d / "claim.pdf").read_bytes())
    _, _, doc = engine_march
    credited = [u for u in doc["periods"][0]["units"] if Decimal(u["credit"]) > 0]
    below = [u for u in credited if not u["met"]]
    met = [u for u in credited if u["met"]]
    assert below and met, "the example month has both kinds"
    assert '2 nodes (§5.1 "Node availability" (service_levels.node)) fell below target' in text
    assert ('4 racks (§5.2 "Rack availability" (service_levels.rack)) met their target and carry a pro-rata credit '
            "for their downtime") in text
    for u in met:
        assert re.search(rf"{u['scope']} {u['id']} [\d.]+% [\d.]+% yes ", text)
    for u in below:
        assert re.search(rf"{u['scope']} {u['id']} [\d.]+% [\d.]+% no ", text)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_log_rows_keep_bytes_that_are_not_utf8(tmp_path, suffix):
    """A Windows-1252 export: the evidence rows hold the log's own bytes (once a crash)."""
    from calculators.claim_package import log_rows

    path = tmp_path / f"log{suffix}"
    if suffix == ".csv":
        path.write_bytes(b"id,scope,target,start,cause\nA1,node,r01-n01,2027-01-02T00:00:00Z,caf\xe9\n"
                         b"A2,node,r01-n02,2027-01-03T00:00:00Z,d\xe9faut\n")
    elif suffix == ".jsonl":
        path.write_bytes(b'{"id": "A1", "cause": "caf\xe9"}\n{"id": "A2", "cause": "d\xe9faut"}\n')
    else:
        path.write_bytes(b'[{"id": "A1", "cause": "caf\xe9"}, {"id": "A2", "cause": "d\xe9faut"}]')
    data = log_rows(path, {2})
    assert b"d\xe9faut" in data and b"caf\xe9" not in data
