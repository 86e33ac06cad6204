"""gjkcli.forks: a forked worker's answer, its exception, its death, and the counter shared by
the processes, each number once."""
import os
import signal

import pytest

from gjkcli import forks

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform does not fork")


def _open_fds() -> set:
    return set(map(int, os.listdir("/proc/self/fd"))) if os.path.isdir("/proc/self/fd") else set()


def test_a_worker_answers_with_what_it_has_and_what_it_is_sent():
    have = {"made before the fork": list(range(5))}

    def task(parent):
        got = parent.receive()
        parent.send(sum(have["made before the fork"]))
        return got * 2

    before = _open_fds()
    with forks.Worker(task) as worker:
        worker.send(21)
        assert worker.receive() == 10
        assert worker.result() == 42
    assert forks.running == set()
    if before:
        assert _open_fds() == before  # both pipes closed


def test_large_messages_go_both_ways_whole():
    big = bytes(range(256)) * 4096  # 1 MiB, beyond a pipe's buffer

    def task(parent):
        return parent.receive() + big

    with forks.Worker(task) as worker:
        worker.send(big)
        assert worker.result() == big * 2


def test_a_worker_s_exception_is_raised_here():
    def task(parent):
        raise ValueError("no such face")

    worker = forks.Worker(task)
    with pytest.raises(ValueError, match="no such face"):
        worker.result()
    assert worker.pid not in forks.running


def test_an_exception_that_does_not_pickle_is_still_one_line_here():
    class Local(Exception):  # a class pickle cannot find by name
        pass

    def task(parent):
        raise Local("from a library")

    with pytest.raises(RuntimeError, match="Local"):
        forks.Worker(task).result()


def test_a_worker_that_dies_is_lost_with_how_it_ended():
    def task(parent):
        os.kill(os.getpid(), signal.SIGKILL)  # a crash in a library, say

    with pytest.raises(forks.Lost, match="killed by signal 9"):
        forks.Worker(task).result()
    assert forks.running == set()


def test_closing_a_running_worker_ends_it():
    def task(parent):
        parent.receive()  # waits for a message that never comes

    worker = forks.Worker(task)
    pid = worker.pid
    worker.close()
    assert pid not in forks.running
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="needs os.waitid to look without reaping")
def test_a_worker_that_answered_is_not_waited_for_and_is_reaped_later():
    """result() kills the copy and goes on (the copy's memory is freed meanwhile); a later
    Worker reaps it."""
    import time

    worker = forks.Worker(lambda parent: 1)
    pid = worker.pid
    assert worker.result() == 1 and pid not in forks.running
    for _ in range(200):
        assert forks.Worker(lambda parent: None).result() is None
        try:  # WNOWAIT: look, leaving it to be reaped
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            break  # reaped by a later Worker
        time.sleep(0.01)
    else:
        pytest.fail("the worker that answered was never reaped")


def test_the_counter_hands_each_number_out_once_across_processes():
    counter = forks.Counter()
    try:
        def task(parent):
            got = []
            while (n := counter.take()) < 3000:
                got.append(n)
            return got

        crew = [forks.Worker(task) for _ in range(3)]
        mine = []
        while (n := counter.take()) < 3000:
            mine.append(n)
        theirs = [w.result() for w in crew]
    finally:
        counter.close()
    every = sorted(mine + [n for t in theirs for n in t])
    assert every == list(range(3000))


def test_a_worker_does_not_run_this_process_s_exit():
    """The copy ends with os._exit: this process's atexit handlers and buffered output stay its
    own (run in a fresh interpreter, whose output is read)."""
    from fresh import python_c

    out = python_c(
        "import atexit, sys\n"
        "from gjkcli import forks\n"
        "atexit.register(lambda: print('exit of', 'parent' if forks.running == set() else '?'))\n"
        "sys.stdout.write('buffered ')\n"
        "print(forks.Worker(lambda parent: 7).result())\n")
    assert out == "buffered 7\nexit of parent\n"


def test_the_interrupt_handler_ends_the_workers():
    """Ctrl-C sent to the command's process alone (not its group) still ends its forked
    workers: `gjkcli.__main__` kills those `running`."""
    from fresh import python_c, wait_gone

    out = python_c(
        "import os, signal, sys, time\n"
        "import gjkcli.__main__\n"
        "from gjkcli import forks\n"
        "w = forks.Worker(lambda parent: time.sleep(60))\n"
        "print(w.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(5)\n", exits=130)
    wait_gone(int(out.split()[0]), "the forked worker")
