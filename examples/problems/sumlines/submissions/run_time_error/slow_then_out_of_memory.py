# Spends more CPU than the time limit (but less than the TLE margin) before it runs out of
# memory: a run-time error "with extra time", as the reference tool calls it.
import time
start = time.process_time()
while time.process_time() - start < 1.05:
    pass
hoard = bytearray(1 << 30)
