"""The signal the callbacks give the sender thread when a full batch is waiting.

One object shared by the enqueuer (which sets it) and the sender (which waits on it), handed
to both by the bridge. A forked child replaces the event inside it: a lock the parent's threads
may have held at the fork would never be released in the child, and the callbacks, which hold
this object's ``set``, keep working.
"""

import threading


class Wakeup(object):
    def __init__(self):
        self._event = threading.Event()

    def set(self):
        self._event.set()

    def wait(self, timeout):
        return self._event.wait(timeout)

    def clear(self):
        self._event.clear()

    def reset_after_fork(self):
        self._event = threading.Event()
