"""Shared by scripts/walking-grid and scripts/tempo-grid: write generated fixtures with `repctl generate`, list
them in a manifest and score them with `repctl eval --json`."""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile


def check_repctl(repctl, script):
    """Exits with a clear message when `repctl` is not an executable."""
    if not os.access(repctl, os.X_OK):
        sys.exit(f"{script}: {repctl} is not an executable (run `swift build -c release` first)")


def evaluate(repctl, config, jobs, cases, prefix):
    """Generates one fixture per case and returns {case index: reps counted}.

    `cases` is a list of (generate arguments after `repctl generate`, true reps, sample rate, exercise name).
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        def generate(item):
            index, (arguments, *_rest) = item
            name = f"case-{index:04d}.csv"
            command = [repctl, "generate", *arguments, "--out", os.path.join(folder, name)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            return name

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            names = list(pool.map(generate, enumerate(cases)))
        manifest = os.path.join(folder, "manifest.csv")
        with open(manifest, "w") as out:
            out.write("file,exercise,participant,true_reps,sample_rate_hz,duration_s,source\n")
            for name, (arguments, truth, rate, exercise) in zip(names, cases):
                out.write(f"{name},{exercise},generated,{truth},{rate},0,repctl generate {arguments[0]}\n")
        command = [repctl, "eval", manifest, "--json"] + (["--config", config] if config else [])
        finished = subprocess.run(command, capture_output=True, text=True)
        if finished.returncode != 0:
            sys.exit(f"{repctl} eval failed (exit {finished.returncode}): {finished.stderr.strip()}")
        result = json.loads(finished.stdout)
    counted = {entry["file"]: entry["counted"] for entry in result["sets"]}
    return {index: counted[name] for index, name in enumerate(names)}
