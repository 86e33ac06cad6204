"""The gjk command run through a small entry (`python -c MEASURED ... OUT scan ...`) that writes
its own process's peak resident memory (KiB) and CPU seconds, "PEAK CPU", to the file OUT named
by its first argument as it exits (after click's sys.exit too): VmHWM of /proc/self/status, the
high-water mark of this program's memory alone, where Linux has it; else getrusage's ru_maxrss,
which on Linux also keeps the RSS of the process that forked it (the benchmark's) from before
the exec. Used by bench_dask.py, and through `measured` by bench_listing.py and bench_reports.py."""

MEASURED = ("import atexit, resource, runpy, sys\n"
            "out = sys.argv.pop(1)\n"
            "def peak():\n"
            "    try:\n"
            "        for line in open('/proc/self/status'):\n"
            "            if line.startswith('VmHWM:'):\n"
            "                return int(line.split()[1])\n"
            "    except OSError:\n"
            "        pass\n"
            "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "def cpu():\n"
            "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
            "    return r.ru_utime + r.ru_stime\n"
            "atexit.register(lambda: open(out, 'w').write(f'{peak()} {cpu()}'))\n"
            "sys.argv[0] = 'gjk'\n"
            "runpy.run_module('gjkcli', run_name='__main__', alter_sys=True)\n")


def measured(args: list, stats) -> tuple:
    """`gjk ARGS` in a fresh process through MEASURED, writing to the file `stats`: (wall
    seconds, peak KiB, CPU seconds, the finished process). SystemExit, with gjk's stderr, when it
    exits with other than 0 or 1."""
    import subprocess
    import sys
    import time

    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", MEASURED, str(stats), *map(str, args)],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    if done.returncode not in (0, 1):
        raise SystemExit(f"gjk {' '.join(map(str, args[:2]))} failed ({done.returncode}): {done.stderr.strip()}")
    peak, cpu = open(stats).read().split()
    return wall, int(peak), float(cpu), done
