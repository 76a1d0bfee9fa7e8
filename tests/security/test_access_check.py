"""security.access on a fake node tree and for real on this machine."""

from __future__ import annotations

import base64
import os
import re
import socket
import stat
import struct
from pathlib import Path

import pytest

from acceptance.results import Status
from acceptance.security import audit_access as aa
from acceptance.security.audit import run_access
from acceptance.security.host import FileStat, Host, table_runner
from acceptance.security.sshkeys import KeyError_, parse_key


def make_key(key_type: str = "ssh-ed25519", seed: int = 1, comment: str = "") -> str:
    def s(b: bytes) -> bytes:
        return struct.pack(">I", len(b)) + b
    blob = s(key_type.encode()) + s(bytes([seed]) * 32)
    return f"{key_type} {base64.b64encode(blob).decode()}" + (f" {comment}" if comment else "")


STAFF = make_key(seed=1, comment="ops@provider")
CUSTOMER = make_key(seed=2, comment="alice@customer")
LEFTOVER = make_key(seed=3, comment="old-contractor")

PROC_TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0 100 0 0 10 0
   1: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0 100 0 0 10 0
   2: 0500000A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1003 1 0 100 0 0 10 0
   3: 0500000A:0016 0600000A:D431 01 00000000:00000000 00:00000000 00000000     0        0 1004 1 0 20 4 1 10 -1
"""
PROC_TCP6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0 100 0 0 10 0
   1: 00000000000000000000000001000000:2382 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2003 1 0 100 0 0 10 0
"""


def write(root: Path, path: str, text: str, mode: int | None = None) -> Path:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    if mode is not None:
        p.chmod(mode)
    return p


@pytest.fixture
def node(tmp_path):
    r = tmp_path
    write(r, "/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\n"
          "PasswordAuthentication yes   # overridden by the drop-in read first\n"
          "PermitRootLogin yes\nUsePAM yes\nKbdInteractiveAuthentication no\n"
          "Match User backup\n    PasswordAuthentication yes\n")
    write(r, "/etc/ssh/sshd_config.d/10-hardening.conf", "PasswordAuthentication no\n")
    write(r, "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
          "alice:x:1000:1000::/home/alice:/bin/bash\nmunge:x:998:998::/nonexistent:/usr/sbin/nologin\n")
    write(r, "/etc/group", "root:x:0:\nmunge:x:998:\n")
    write(r, "/root/.ssh/authorized_keys", f"# provider staff\n{STAFF}\n")
    write(r, "/home/alice/.ssh/authorized_keys",
          f'from="10.0.0.0/8",no-pty {CUSTOMER.replace("alice@customer", "laptop")}\n{LEFTOVER}\nnot a key line\n')
    write(r, "/etc/munge/munge.key", "k" * 128, 0o644)
    write(r, "/etc/slurm/slurm.conf", "ClusterName=x\n", 0o664)
    write(r, "/proc/net/tcp", PROC_TCP)
    write(r, "/proc/net/tcp6", PROC_TCP6)
    shared = r / "mnt/shared"
    (shared / "scratch").mkdir(parents=True)
    (shared / "projects/open").mkdir(parents=True)
    (shared / "scratch").chmod(0o1777)
    (shared / "projects/open").chmod(0o777)
    write(r, "/proc/mounts", "/dev/sda1 / ext4 rw 0 0\nnfs1:/export /mnt/shared nfs4 rw 0 0\n")
    return r


CONTRACT = {"access": {"provider_staff_keys": [STAFF], "customer_keys": [CUSTOMER, LEFTOVER],
                       "allowed_ports": [22, "8000-8100/tcp"]}}


def subjects(verdicts):
    return {v.details["subject"]: v for v in verdicts}


def test_fake_node_all_listed(node):
    out = run_access(Host(node), CONTRACT, criterion="sec-access", node="n1")
    v = subjects(out)
    assert (v["sshd PasswordAuthentication"].status, v["sshd PasswordAuthentication"].measured) == (Status.PASS, "no")
    assert v["sshd PasswordAuthentication"].details["origin"].endswith("10-hardening.conf:1")
    assert (v["sshd PermitRootLogin"].status, v["sshd PermitRootLogin"].reason) == (Status.FAIL, "ssh_root_password_login")
    assert v["sshd Match block passwordauthentication"].reason == "ssh_match_override"
    keys = v["authorized keys"]
    assert (keys.status, keys.reason, keys.measured) == (Status.PASS, "authorized_keys_listed", "3 keys")
    assert keys.details["by_role"]["provider_staff_keys"] == [f"root:{parse_key(STAFF).fingerprint}"]
    bad_line = [x for x in out if x.reason == "authorized_keys_line_invalid"]
    assert len(bad_line) == 1 and bad_line[0].details["subject"] == "/home/alice/.ssh/authorized_keys:3"
    munge = [x for x in out if x.details["subject"] == "/etc/munge/munge.key"]
    assert [(x.status, x.reason) for x in munge][0] == (Status.FAIL, "munge_key_mode")
    assert munge[0].measured.startswith("0644 ")
    assert (v["/etc/slurm/slurm.conf"].status, v["/etc/slurm/slurm.conf"].reason) == (Status.FAIL, "slurm_conf_writable")
    ports = [x for x in out if x.reason == "port_not_allowed"]
    # 0.0.0.0:22 and :::22 allowed, 127.0.0.1:631 / ::1 / ::ffff:127.0.0.1 are loopback; 10.0.0.5:8080 in range.
    assert [(x.details["address"], x.details["port"]) for x in ports] == []
    assert v["listening sockets"].status is Status.PASS
    shared = v["/mnt/shared"]
    assert (shared.status, shared.reason) == (Status.FAIL, "world_writable_dir")
    assert shared.details["directories"] == ["/mnt/shared/projects/open"]      # sticky scratch is fine


def test_wrong_key_list_fails(node):
    wrong = {"access": {"provider_staff_keys": [STAFF], "customer_keys": [CUSTOMER], "allowed_ports": [22]}}
    out = run_access(Host(node), wrong)
    unlisted = [x for x in out if x.reason == "unlisted_authorized_key"]
    assert len(unlisted) == 1
    u = unlisted[0]
    assert u.status is Status.FAIL
    assert (u.details["user"], u.details["file"], u.details["line"]) == ("alice", "/home/alice/.ssh/authorized_keys", 2)
    assert u.details["fingerprint"] == parse_key(LEFTOVER).fingerprint
    assert u.details["comment"] == "old-contractor"
    assert not any(x.reason == "authorized_keys_listed" for x in out)
    ports = [(x.details["address"], x.details["port"]) for x in out if x.reason == "port_not_allowed"]
    assert ports == [("10.0.0.5", 8080)]


def test_key_match_ignores_comment_and_options(node):
    # The customer key is in the file with options and another comment; the contract lists it bare.
    bare = " ".join(CUSTOMER.split()[:2])
    out = run_access(Host(node), {"access": {"provider_staff_keys": [STAFF], "customer_keys": [bare, LEFTOVER]}})
    assert any(x.reason == "authorized_keys_listed" for x in out)


def test_no_access_section_warns(node):
    out = run_access(Host(node), {})
    v = {x.reason: x for x in out}
    assert v["no_access_list"].status is Status.WARN
    assert len(v["no_access_list"].details["keys"]) == 3
    assert v["no_port_allow_list"].status is Status.WARN


def test_empty_agreed_list_means_nobody(node):
    out = run_access(Host(node), {"access": {"customer_keys": []}})
    assert sum(1 for x in out if x.reason == "unlisted_authorized_key") == 3


def test_contract_key_typo_is_an_error(node):
    out = run_access(Host(node), {"access": {"customer_keys": ["ssh-ed25519 AAAA-not-base64"]}})
    assert any(x.status is Status.ERROR and x.reason == "contract_key_invalid" for x in out)


def test_sshd_t_wins_over_files(node):
    sshd_t = "port 22\npasswordauthentication yes\npermitrootlogin without-password\nusepam yes\n" \
             "kbdinteractiveauthentication yes\nauthorizedkeysfile .ssh/authorized_keys\n"
    out = run_access(Host(node, run=table_runner({"sshd -T": sshd_t})), CONTRACT)
    v = subjects(out)
    assert v["sshd PasswordAuthentication"].status is Status.FAIL
    assert v["sshd PasswordAuthentication"].details["source"] == "sshd -T"
    assert v["sshd PermitRootLogin"].status is Status.PASS
    assert v["sshd KbdInteractiveAuthentication"].reason == "ssh_kbd_interactive_enabled"


def test_owner_checks_are_pure():
    raw = aa.AccessRaw(None, (), (aa.Account("root", 0, "/root", "/bin/sh"),), {0: "root"}, (),
                       {aa.MUNGE_KEY: FileStat(aa.MUNGE_KEY, stat.S_IFREG | 0o400, 0, 0, False, False),
                        "/etc/slurm/slurm.conf": FileStat("/etc/slurm/slurm.conf", stat.S_IFREG | 0o644, 1234, 0, False, False),
                        "/etc/slurm/slurmdbd.conf": FileStat("/etc/slurm/slurmdbd.conf", stat.S_IFREG | 0o640, 0, 0, False, False)},
                       (), False, ())
    reasons = [(v.status, v.reason) for v in aa.evaluate_files(raw, "c", None)]
    assert (Status.FAIL, "munge_key_owner") in reasons
    assert (Status.FAIL, "slurm_conf_owner") in reasons
    assert (Status.FAIL, "slurmdbd_conf_readable") in reasons


def test_proc_net_parsing():
    ls = aa.parse_proc_net_tcp(PROC_TCP, "tcp") + aa.parse_proc_net_tcp(PROC_TCP6, "tcp6")
    assert [(x.address, x.port) for x in ls] == [("0.0.0.0", 22), ("127.0.0.1", 631), ("10.0.0.5", 8080),
                                                 ("::", 22), ("::1", 9090), ("::ffff:127.0.0.1", 8081)]
    assert [aa.is_loopback(x.address) for x in ls] == [False, True, False, False, True, True]


@pytest.mark.parametrize("rules,err", [(["22", "80/tcp", "60000-61000"], False), (["ssh"], True), (["70000"], True)])
def test_port_rules(rules, err):
    if err:
        with pytest.raises(ValueError):
            aa.parse_port_rules(rules)
    else:
        assert aa.parse_port_rules(rules) == [(22, 22, None), (80, 80, "tcp"), (60000, 61000, None)]


@pytest.mark.parametrize("line", ["", "# c", "ssh-ed25519", "ssh-foo AAAA", "ssh-ed25519 !!!!",
                                  make_key("ssh-rsa").replace("ssh-rsa", "ssh-ed25519", 1)])
def test_bad_key_lines(line):
    with pytest.raises(KeyError_):
        parse_key(line)


def test_options_with_quoted_spaces():
    k = parse_key(f'command="echo hello world",from="a,b" {CUSTOMER}')
    assert k.options == 'command="echo hello world",from="a,b"' and k.comment == "alice@customer"
    assert k.identity == parse_key(CUSTOMER).identity


# ---------------------------------------------------------------- this machine, for real

def _real_setting(key: str) -> str | None:
    """First value of `key` in the real sshd_config and its Include files, as sshd reads them."""
    import glob

    def walk(path):
        try:
            text = Path(path).read_text()
        except OSError:
            return None
        for line in text.splitlines():
            toks = line.split("#", 1)[0].split()
            if not toks:
                continue
            if toks[0].lower() == "match":
                return None
            if toks[0].lower() == "include":
                for pat in toks[1:]:
                    for hit in sorted(glob.glob(pat if pat.startswith("/") else "/etc/ssh/" + pat)):
                        got = walk(hit)
                        if got:
                            return got
            elif toks[0].lower() == key.lower() and len(toks) > 1:
                return toks[1].lower()
        return None
    return walk("/etc/ssh/sshd_config")


def test_real_sshd():
    if not Path("/etc/ssh/sshd_config").exists():
        pytest.skip("openssh-server is not installed here (scripts/setup installs it)")
    out = run_access(Host(), {"access": {"allowed_ports": [22]}})
    pw = subjects(out)["sshd PasswordAuthentication"]
    if pw.details["source"] == "sshd -T":
        assert pw.measured in ("yes", "no")
    else:
        expected = _real_setting("PasswordAuthentication") or "yes"      # OpenSSH default
        assert pw.measured == expected
        assert pw.status is (Status.FAIL if expected == "yes" else Status.PASS)


def test_real_listener_outside_allow_list():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("0.0.0.0", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        out = run_access(Host(), {"access": {"allowed_ports": [22]}})
        mine = [x for x in out if x.reason == "port_not_allowed" and x.details["port"] == port]
        assert len(mine) == 1 and mine[0].status is Status.FAIL
        assert mine[0].details["address"] == "0.0.0.0"
        if mine[0].details["process"]:
            assert re.search(r"python|pytest", mine[0].details["process"])
        out = run_access(Host(), {"access": {"allowed_ports": [22, f"{port}-{port}"]}})
        assert not [x for x in out if x.reason == "port_not_allowed" and x.details["port"] == port]
    finally:
        srv.close()


def test_real_loopback_listener_is_not_exposed():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    try:
        port = srv.getsockname()[1]
        out = run_access(Host(), {"access": {"allowed_ports": [22]}})
        assert not [x for x in out if x.reason == "port_not_allowed" and x.details["port"] == port]
    finally:
        srv.close()


def test_real_file_modes():
    out = run_access(Host(), {"access": {"allowed_ports": [22]}})
    munge = [x for x in out if x.details["subject"] == "/etc/munge/munge.key"]
    assert munge
    if not os.path.exists("/etc/munge/munge.key"):
        assert munge[0].reason == "munge_key_absent"
        return
    mode = stat.S_IMODE(os.stat("/etc/munge/munge.key").st_mode)
    assert munge[0].measured.startswith(f"{mode:04o} ")
    assert (munge[0].status is Status.PASS) == (mode & 0o077 == 0 and munge[0].measured.split()[1].startswith("munge:"))


def test_real_world_writable_dirs(tmp_path):
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch").chmod(0o1777)
    (tmp_path / "private").mkdir()
    out = run_access(Host(), {}, params={"shared_mounts": [str(tmp_path)]})
    mine = [x for x in out if x.details["subject"] == str(tmp_path)]
    assert len(mine) == 1
    assert (mine[0].status, mine[0].reason) == (Status.FAIL, "world_writable_dir")
    assert mine[0].details["directories"] == [str(tmp_path / "open")]
    (tmp_path / "open").chmod(0o755)
    out = run_access(Host(), {}, params={"shared_mounts": [str(tmp_path)]})
    mine = [x for x in out if x.details["subject"] == str(tmp_path)]
    assert (mine[0].status, mine[0].reason) == (Status.PASS, "no_world_writable_dirs")
    assert mine[0].details["sticky_world_writable"] == [str(tmp_path / "scratch")]
