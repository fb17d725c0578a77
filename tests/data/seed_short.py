# The seed scenario of issue 42, shortened for the suite: a numpy loop that
# sleeps at the end of every batch and, every 5th batch, writes 50 MiB of
# os.urandom to checkpoint_N.chk in one write (no fsync) and removes it.
# The matrices are smaller and the sleeps shorter than the seed's, so a run
# takes seconds; what happens in the kernel is the same. Argument: the
# directory to write in.
import os
import sys
import time

import numpy as np

os.chdir(sys.argv[1])
a = np.random.rand(300, 300)
for batch in range(15):
    b = a @ a
    if batch % 5 == 4:
        p = f"checkpoint_{batch}.chk"
        with open(p, "wb") as f:
            f.write(os.urandom(50 << 20))
        os.remove(p)
    time.sleep(0.1)
