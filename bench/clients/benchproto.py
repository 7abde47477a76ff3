"""The harness protocol of the Python consumers (bench/README.md): three lines on stdout.

    READY <cpu_s>                     set-up done (imports, client or agent made), request next
    FIRST                             the first text delta arrived
    END <events> <text_bytes> <cpu_s> the stream is consumed

cpu_s is this process's user + system CPU time. Standard library only, imported by every
Python consumer alike (panto's and the peers'), so it costs them all the same.
"""
import resource
import sys
import threading

_out = sys.stdout
_first_lock = threading.Lock()
_first_sent = False


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def ready() -> None:
    _out.write(f"READY {cpu():.6f}\n")
    _out.flush()


def first() -> None:
    global _first_sent
    with _first_lock:
        if not _first_sent:
            _first_sent = True
            _out.write("FIRST\n")
            _out.flush()


def end(events: int, text_bytes: int) -> None:
    _out.write(f"END {events} {text_bytes} {cpu():.6f}\n")
    _out.flush()


def args():
    """PROVIDER BASE_URL [STREAMS]"""
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} PROVIDER BASE_URL [STREAMS]")
    provider, base_url = sys.argv[1], sys.argv[2]
    streams = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    return provider, base_url, max(1, streams)


def run_threads(streams: int, one) -> tuple:
    """Runs one() -> (events, text_bytes) on `streams` threads (or inline for 1); sums them."""
    if streams == 1:
        return one()
    results = [None] * streams
    errors = []

    def target(i: int) -> None:
        try:
            results[i] = one()
        except BaseException as e:  # reported after the join
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return sum(r[0] for r in results), sum(r[1] for r in results)
