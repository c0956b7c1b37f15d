"""Helpers the Python tests share."""
import threading


def run_in_threads(n, work):
    """Runs work(k) for k in range(n), each on its own thread, and returns
    the exceptions they raised (none expected), to be checked by the
    caller in the main thread."""
    errors = []

    def guarded(k):
        try:
            work(k)
        except Exception as error:  # reported to the caller
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
