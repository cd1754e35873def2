#!/usr/bin/env python3
"""runner's render of every shared Rally track beside Rally's own (`esrally render-track
--offline`, esrally 2.13 from PyPI in a venv), and of every OSB workload beside OSB's renderer
(opensearch-benchmark from PyPI: its loader's render_template_from_file). Both renders are
parsed as JSON and compared as values (a render that is not JSON is a failure); a row says `equal`, or the first paths that differ, or
which side failed and why. The snapshot holds no OSB `common_operations/`, which the
workloads collect from `../../`: each workload is copied beside runner's stand-in
(benches/fixtures/osb-common-operations) and both renderers read that copy. Values Rally derives from the clock (`now`) are masked: the two
renders run seconds apart.

    python3 benches/render_vs_rally.py [--shared ../shared/rally-tracks] [--only geonames]
        [--params k:v,k2:v2]
"""
import argparse, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "runner")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rally_tracks import beside_common_operations, tracks  # noqa: E402
VENV = os.path.join(tempfile.gettempdir(), "render-vs-rally")

OSB_RENDER = r"""
import json, sys
from osbenchmark.workload import loader
print(loader.render_template_from_file(sys.argv[1], {}))
"""


def venv(name, package):
    d = f"{VENV}-{name}"
    py = os.path.join(d, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", d], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", package], check=True)
    return d


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:160] if lines else "failed"


def rally_render(env, d, params):
    args = [os.path.join(env, "bin", "esrally"), "render-track", f"--track-path={d}", "--offline", "--quiet"]
    if params:
        args.append(f"--track-params={params}")
    out = subprocess.run(args, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HOME": tempfile.gettempdir() + "/render-vs-rally-home"})
    if out.returncode != 0:
        return None, last_line(out.stderr or out.stdout)
    return out.stdout, None


def osb_render(env, d, f):
    out = subprocess.run([os.path.join(env, "bin", "python"), "-c", OSB_RENDER, os.path.join(d, f)],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return None, last_line(out.stderr)
    try:
        json.loads(out.stdout)
    except json.JSONDecodeError as e:
        return None, f"renders text that is not JSON ({e})"
    return out.stdout, None


def runner_render(d, params):
    args = [BIN, "render-track", "--track-path", d, "--results-dir", tempfile.gettempdir() + "/render-vs-rally-home"]
    if params:
        args += ["--track-params", params.replace(":", "=")]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return None, last_line(out.stderr)
    return out.stdout, None


def differences(a, b, path="", out=None, limit=3):
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'runner' if k in a else 'reference'}")
            else:
                differences(a[k], b[k], f"{path}/{k}", out, limit)
            if len(out) >= limit:
                break
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items in runner, {len(b)} in reference")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}/{i}", out, limit)
            if len(out) >= limit:
                break
    elif a != b and not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and float(a) == float(b)):
        out.append(f"{path}: runner {json.dumps(a)[:60]} vs reference {json.dumps(b)[:60]}")
    return out


def mask_clock(value, now_like):
    """Numbers within a day of now (seconds or millis), and dates of today, differ only by when
    each renderer ran."""
    if isinstance(value, dict):
        return {k: mask_clock(v, now_like) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_clock(v, now_like) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for scale in (1, 1000):
            if abs(value / scale - now_like) < 86400:
                return "<now>"
    if isinstance(value, str) and "many-clusters-" in value:
        return "many-clusters-<now>"
    return value


class Renderers:
    """The reference renderers (esrally 2.13; OSB's on first need), set up once."""

    def __init__(self, scratch):
        self.esrally = venv("esrally", "esrally==2.13.0")
        self.osb = None
        self.scratch = scratch

    def compare(self, family, d, params, now):
        """One track: (reference, runner's side, verdict: `equal` or what differs)."""
        f = "workload.json" if os.path.exists(os.path.join(d, "workload.json")) else "track.json"
        if family == "opensearch":
            self.osb = self.osb or venv("osb", "opensearch-benchmark")
            d = beside_common_operations(d, self.scratch)
            ref, ref_err = osb_render(self.osb, d, f)
            who = "OSB"
        else:
            ref, ref_err = rally_render(self.esrally, d, params)
            who = "esrally 2.13"
        ours, our_err = runner_render(d, params)
        if ref_err or our_err:
            verdict = "both fail" if ref_err and our_err else "differ: one side fails"
            return f"{who}: {ref_err or 'ok'}", our_err or "ok", verdict
        try:
            r, o = json.loads(ref), json.loads(ours)
        except json.JSONDecodeError as e:
            return who, "", f"not JSON: {e}"
        diff = differences(mask_clock(o, now), mask_clock(r, now))
        return who, "ok", "equal" if not diff else "<br>".join(diff)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "rally-tracks"))
    ap.add_argument("--only", default="")
    ap.add_argument("--params", default="", help="track params for both renderers, k:v,k2:v2")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    import time
    now = time.time()
    renderers = Renderers(tempfile.mkdtemp(prefix="render-vs-rally-"))
    print("| track | reference | runner | comparison |")
    print("|---|---|---|---|")
    equal = total = 0
    for family, name, d in tracks(a.shared, only):
        who, ours, verdict = renderers.compare(family, d, a.params, now)
        total += 1
        equal += verdict == "equal"
        print(f"| {family}/{name} | {who} | {ours} | {verdict} |")
    print(f"\n{equal} of {total} tracks render equal to the reference renderer.")


if __name__ == "__main__":
    main()
