# SPDX-License-Identifier: MIT
"""make deb: packages laid out as Debian's eatmydata, libeatmydata1 and
nocache, lintian clean of errors, that replace Debian's in a Debian root made
by mmdebstrap (apt install ./x.deb) and are replaced back (apt install
eatmydata=<Debian's version>); what they install works there, as the kernel
counts it; mmdebstrap's eatmydata hook finds in them what it looks for."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, TESTS, require, run
from helpers import cached_bytes, evict

MIRROR = "deb http://deb.debian.org/debian bookworm main"
HOOK = Path("/usr/share/mmdebstrap/hooks/eatmydata")
SYNC = [("ext4:ext4_sync_file_enter", None)]
# The Debian packages ours replace, with the names of their files.
DEBIAN = ["eatmydata", "libeatmydata1", "nocache"]

pytestmark = [pytest.mark.skipif(os.geteuid() != 0 and os.environ.get("CI") != "true",
                                 reason="mmdebstrap --mode=root and chroot need root"),
              pytest.mark.slow, pytest.mark.root]


def sh(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=600, **kw)


def make_list(target):
    out = sh("make", "-s", "--no-print-directory", "-C", ROOT, target, check=True).stdout
    return out.split()


def inside(root, *cmd):
    """cmd chrooted in root, with a /proc of its own mount namespace (the
    launchers read /proc/self/exe)."""
    return ["unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"', str(root),
            "env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            *map(str, cmd)]


def logged(log, *cmd):
    """run() (perf-counted) of a command whose output goes to log: what
    mmdebstrap says names the libraries, which run() takes for ld.so's
    complaints."""
    r = run(["sh", "-c", 'log=$1; shift; exec "$@" >"$log" 2>&1', "sh", log, *cmd],
            events=SYNC, check=False)
    r.stderr = Path(log).read_text()
    assert r.returncode == 0, r.why()
    return r


def contents(deb):
    """{path: link target or None} of a package's files."""
    listing = sh("dpkg-deb", "-c", deb, check=True).stdout
    files = {}
    for line in listing.splitlines():
        name = line.split(None, 5)[5]
        if line.startswith("d"):
            continue
        path, _, target = name.partition(" -> ")
        files[path.lstrip(".")] = target or None
    return files


def version(deb):
    return sh("dpkg-deb", "-f", deb, "Version", check=True).stdout.strip()


@pytest.fixture(scope="module")
def debian_root(tmp_path_factory):
    """A Debian root with Debian's eatmydata, libeatmydata1 and nocache,
    bootstrapped without the hook: the native control of the hook's test."""
    root = tmp_path_factory.mktemp("debian") / "root"
    r = logged(root.parent / "log", "mmdebstrap", "--mode=root", "--variant=apt",
               "--include=" + ",".join(DEBIAN), "bookworm", root, MIRROR)
    return root, r.counts["ext4:ext4_sync_file_enter"]


def test_lintian_no_errors(debs):
    require("lintian")
    out = sh("lintian", "--no-cfg", "--pedantic", *debs.values())
    errors = [l for l in out.stdout.splitlines() if l.startswith("E:")]
    assert errors == [] and out.returncode in (0, 2), out.stdout + out.stderr


def test_layout_like_debian(debs):
    """Every file make install puts under /usr is in a package: launchers and
    their pages, each library by soname with the LD_PRELOAD name beside it in
    its multiarch directory (the biarch $LIB links, lib32, excepted)."""
    packaged = {}
    for name, deb in debs.items():
        for path, target in contents(deb).items():
            packaged[path] = (name, target)
    multi = [m for m in make_list("print-multiarch") if m]
    for path in subprocess.run(["make", "-s", "-C", ROOT, "installed", "PREFIX=/usr"],
                               capture_output=True, text=True, check=True).stdout.split():
        if path.startswith("/usr/bin/") or path.startswith("/usr/share/"):
            suffix = ".gz" if "/man/" in path else ""
            assert path + suffix in packaged, path
        elif any(path.startswith(f"/usr/{m}/") for m in multi):
            pkg, target = packaged[path]
            assert pkg.startswith("libeatmydata1_"), (path, pkg)
            if path.endswith(".so"):
                assert target == Path(path).name + ".1", (path, target)
    # What mmdebstrap's hook and Debian's users name.
    assert "/usr/bin/eatmydata" in contents(debs["eatmydata_all"])
    for m in multi:
        arch = subprocess.run(["dpkg-architecture", "-t", m[4:], "-q", "DEB_HOST_ARCH"],
                              capture_output=True, text=True).stdout.strip()
        lib = contents(debs[f"libeatmydata1_{arch}"])
        assert lib[f"/usr/{m}/libeatmydata.so"] == "libeatmydata.so.1"
        assert lib[f"/usr/{m}/libeatmydata.so.1"] is None
    assert "/usr/lib/nocache/nocache.so" in contents(debs["nocache_amd64"])


# Debian's versions in bookworm, and the updates Debian could make of them.
DEBIAN_NOW = {"eatmydata": "130-2", "libeatmydata1": "130-2+b1", "nocache": "1.1-1+b1"}
DEBIAN_NEXT = {"eatmydata": ["130-2+deb12u1", "130-3", "131-1"],
               "libeatmydata1": ["130-2+b2", "130-2+deb12u1", "130-3", "131-1"],
               "nocache": ["1.1-1+b2", "1.1-1+deb12u1", "1.1-2", "1.2-1"]}


def test_versions_between_debians(debs):
    """No epoch; each package's version above Debian's in bookworm (apt
    installs ours over it) and below every update Debian could make of it
    (apt upgrade takes Debian's back), with this tree's version in it."""
    make_version = sh("make", "-s", "-C", ROOT, "--eval=v:\n\t@echo $(VERSION)", "v").stdout.strip()
    for name, deb in debs.items():
        v = version(deb)
        assert ":" not in v and v.endswith("+eatmydata" + make_version), (name, v)
        pkg = name.split("_")[0]
        if pkg not in DEBIAN_NOW:
            continue
        assert sh("dpkg", "--compare-versions", v, "gt", DEBIAN_NOW[pkg]).returncode == 0, v
        for later in DEBIAN_NEXT[pkg]:
            assert sh("dpkg", "--compare-versions", v, "lt", later).returncode == 0, (v, later)


def test_dependencies_from_shlibs(debs):
    """dpkg-shlibdeps' libc dependency, for the i386 library too (found
    through the build machine's biarch libc, named as the i386 package)."""
    for name, deb in debs.items():
        if "-dbgsym" in name or name.endswith("_all"):
            continue
        depends = sh("dpkg-deb", "-f", deb, "Depends").stdout
        assert "libc6 (>= 2." in depends and "libc6-i386" not in depends, (name, depends)


@pytest.mark.parametrize("include", [False])  # True: test_readme_recipe
def test_mmdebstrap_hook(debs, debian_root, tmp_path, include):
    """mmdebstrap --hook-dir=.../eatmydata with our packages in the sources:
    its extract hook unpacks usr/bin/eatmydata from eatmydata_*_all.deb and
    libeatmydata.so* from libeatmydata1, runs every dpkg through them, and the
    bootstrap's syncs are eaten; without the hook (the Debian root) they
    are not.  Its customize hook keeps them when eatmydata was installed, and
    removes them when it was not."""
    require("mmdebstrap")
    repo = tmp_path / "repo"
    repo.mkdir()
    for deb in debs.values():
        shutil.copy(deb, repo)
    index = sh("dpkg-scanpackages", "--multiversion", ".", cwd=repo, check=True).stdout
    (repo / "Packages").write_text(index)
    root = tmp_path / "root"
    r = logged(tmp_path / "log", "mmdebstrap", "--mode=root", "--variant=essential",
               "--hook-dir", HOOK, *(["--include=eatmydata"] if include else []),
               "bookworm", root, MIRROR, f"deb [trusted=yes] copy://{repo} ./")
    said = r.stderr
    ours = version(debs["eatmydata_all"])
    assert "eatmydata0.1.0_all.deb" in said and "libeatmydata.so.1" in said, r.why()
    _, native = debian_root
    assert native > 1000, f"the bootstrap without the hook synced {native} times"
    assert r.counts["ext4:ext4_sync_file_enter"] < 50, r.why()
    assert not (root / "usr/bin/dpkg.distrib").exists()
    versions = sh(*inside(root, "dpkg-query", "-W", "eatmydata", "libeatmydata1")).stdout
    left = sorted(p.name for p in (root / "usr/lib/x86_64-linux-gnu").glob("libeatmydata*"))
    if include:
        assert versions.count("\t" + ours) == 2, versions
        assert left == ["libeatmydata.so", "libeatmydata.so.1"]
        assert (root / "usr/libexec/eatmydata/eatmydata").exists()
    else:
        assert ours not in versions and left == [], (versions, left)
        assert not (root / "usr/bin/eatmydata").exists()


def readme_recipe():
    """The README's shell block that bootstraps with mmdebstrap, as lines
    (continuations joined)."""
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```sh\n")[1:]]
    block = next(b for b in blocks if "mmdebstrap" in b and "dpkg-scanpackages" in b)
    return block.replace("\\\n", " ").splitlines()


def test_readme_recipe(debs, debian_root, tmp_path):
    """The README's recipe, pasted: make deb (done once for the session: the
    same command), index the packages, bootstrap with the eatmydata hook and
    ours included.  The i386 and amd64 libeatmydata1 have one version, which
    dpkg-scanpackages without --multiversion keeps only one of, and the
    bootstrap failed."""
    require("mmdebstrap")
    lines = readme_recipe()
    assert lines[0] == "make deb", lines
    (tmp_path / "build").mkdir()
    (tmp_path / "build/deb").symlink_to(debs["eatmydata_all"].parent)
    script = "set -ex\n" + "\n".join(l.removeprefix("sudo ") for l in lines[1:]) + "\n"
    r = logged(tmp_path / "log", "bash", "-c", f"cd {tmp_path} && {script}")
    tars = list(tmp_path.glob("*.tar"))
    assert len(tars) == 1, r.why()
    listing = sh("tar", "-tf", tars[0], check=True).stdout.split()
    assert "./usr/libexec/eatmydata/eatmydata" in listing, r.why()
    assert "./usr/lib/x86_64-linux-gnu/libeatmydata.so.1" in listing
    assert debian_root[1] > 1000, f"the bootstrap without the hook synced {debian_root[1]} times"
    assert r.counts["ext4:ext4_sync_file_enter"] < 50, r.why()


@pytest.fixture(scope="module")
def our_root(debs, debian_root, tmp_path_factory):
    """The Debian root with ours installed over Debian's by apt, and the i386
    library beside the amd64 one (the i386 architecture added)."""
    root = tmp_path_factory.mktemp("ours") / "root"
    subprocess.run(["cp", "-a", debian_root[0], root], check=True)
    (root / "tmp/debs").mkdir()
    for deb in debs.values():
        shutil.copy(deb, root / "tmp/debs")
    native = [f"/tmp/debs/{d.name}" for n, d in debs.items()
              if not n.endswith("_i386") and "-dbgsym" not in n]
    # (ours recommend libdw1, which apt fetches: its lists first)
    r = sh(*inside(root, "sh", "-c", 'apt-get update -qq && apt-get install -y "$@"', "sh",
                   *native))
    assert r.returncode == 0, r.stdout + r.stderr
    if "libeatmydata1_i386" in debs:
        r = sh(*inside(root, "sh", "-c", "dpkg --add-architecture i386 && apt-get update -qq && "
                       "apt-get install -y /tmp/debs/libeatmydata1_*_i386.deb"))
        assert r.returncode == 0, r.stdout + r.stderr
    for p in ENTRIES:
        shutil.copy(TESTS / p, root / "usr/local/bin")
    (root / "tmp/w").mkdir()
    return root


def test_replaced_in_place(our_root, debs):
    out = sh(*inside(our_root, "dpkg-query", "-W", "-f", "${Package}:${Architecture} ${Version}\n",
                     "eatmydata", "eatmydata-tools", "libeatmydata1:*", "nocache")).stdout
    ours = {version(d) for d in debs.values()}
    assert len(out.splitlines()) >= 4, out
    assert all(l.split()[1] in ours for l in out.splitlines()), out
    assert not (our_root / "usr/lib/x86_64-linux-gnu/libeatmydata.so.1.3.0").exists()


ENTRIES = ["entry"] + (["entry32"] if (TESTS / "entry32").exists() else [])


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("how", ["launcher", "LD_PRELOAD", "ld.so.preload", "link"])
def test_eaten_in_root(our_root, entry, how):
    """Each way Debian's users load it, for each ELF class, in the root."""
    native = run(inside(our_root, entry, "fsync", "/tmp/w"), events=SYNC)
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    cmd = [entry, "fsync", "/tmp/w"]
    preload = our_root / "etc/ld.so.preload"
    link = our_root / "usr/local/sbin" / entry
    if how == "launcher":
        cmd = ["eatmydata", *cmd]
    elif how == "LD_PRELOAD":
        cmd = ["env", "LD_PRELOAD=libeatmydata.so", *cmd]
    elif how == "ld.so.preload":
        preload.write_text("libeatmydata.so\n")
    else:
        link.symlink_to("/usr/bin/eatmydata")   # earlier in PATH than the program
    try:
        r = run(inside(our_root, *cmd), events=SYNC)
    finally:
        preload.unlink(missing_ok=True)
        link.unlink(missing_ok=True)
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()


def test_nocache_syncstat_hirestimes_in_root(our_root):
    big = our_root / "tmp/w/big"
    big.write_bytes(os.urandom(8 << 20))
    evict(big)
    run(inside(our_root, "sh", "-c", "cat /tmp/w/big >/dev/null"), events=SYNC)
    assert cached_bytes(big) == big.stat().st_size, "native cat caches the file"
    evict(big)
    run(inside(our_root, "nocache", "sh", "-c", "cat /tmp/w/big >/dev/null"), events=SYNC)
    assert cached_bytes(big) == 0
    r = logged(our_root / "tmp/syncstat.log", *inside(our_root, "syncstat", "entry", "fsync", "/tmp/w"))
    assert "1 durability call;" in r.stderr and r.counts["ext4:ext4_sync_file_enter"] > 0, r.why()
    r = run(inside(our_root, "hirestimes", "getconf", "CLK_TCK"), events=SYNC)
    assert r.stdout == "1000000\n", r.why()


def test_back_to_debian(our_root, debian_root, debs, tmp_path):
    """apt install eatmydata=<Debian's version>...: Debian's packages back,
    none of our files left, Debian's eatmydata working."""
    versions = sh(*inside(debian_root[0], "dpkg-query", "-W", "-f", "${Package}=${Version} ",
                          *DEBIAN), check=True).stdout.split()
    root = tmp_path / "root"
    subprocess.run(["cp", "-a", our_root, root], check=True)
    r = sh(*inside(root, "apt-get", "install", "-y", "--allow-downgrades", *versions))
    assert r.returncode == 0, r.stdout + r.stderr
    now = sh(*inside(root, "dpkg-query", "-W", "-f", "${Package}=${Version} ", *DEBIAN)).stdout
    assert sorted(now.split()) == sorted(versions), now
    left = sh(*inside(root, "dpkg-query", "-W", "eatmydata-tools")).stdout
    assert version(debs["eatmydata-tools_amd64"]) not in left, left
    for gone in ["usr/bin/syncstat", "usr/libexec/eatmydata", "usr/lib/x86_64-linux-gnu/libnocache.so.1"]:
        assert not (root / gone).exists(), gone
    r = run(inside(root, "eatmydata", "entry", "fsync", "/tmp/w"), events=SYNC)
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()


def test_script_link_mode(tmp_path, scratch):
    """The eatmydata package's script runs the launcher under the link's
    path: in symlink mode the launcher skips the script as it skips itself
    (it found the link again and ran it forever), and runs the program."""
    from conftest import EATMYDATA
    script = tmp_path / "eatmydata"
    script.write_text((ROOT / "debian/eatmydata.sh").read_text()
                      .replace("/usr/libexec/eatmydata/eatmydata", str(EATMYDATA)))
    script.chmod(0o755)
    links = tmp_path / "bin"
    links.mkdir()
    (links / "entry").symlink_to(script)
    path = f"{links}:{TESTS}:{os.environ['PATH']}"
    native = run([TESTS / "entry", "fsync", scratch], events=SYNC)
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    r = run(["env", f"PATH={path}", "timeout", "20", "entry", "fsync", scratch], events=SYNC)
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()
    # Unpacked without the launcher (mmdebstrap's hook): the library by name.
    script.write_text(script.read_text().replace(str(EATMYDATA), str(tmp_path / "none")))
    r = run([script, "env"], events=SYNC)
    assert "LD_PRELOAD=libeatmydata.so" in r.stdout, r.why()
    r = subprocess.run([script], capture_output=True, text=True)
    assert r.returncode == 125 and r.stderr.startswith("eatmydata: "), r.stderr
    r = subprocess.run([script, "--", "no-such-command"], capture_output=True, text=True)
    assert r.returncode == 127, r.stderr
