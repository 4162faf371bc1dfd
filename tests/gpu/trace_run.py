"""Run a foundry command and dump every thread's stack if it is still running after N seconds:
    python tests/gpu/trace_run.py SECONDS optimize examples/ops/softmax.py --budget 4
For diagnosing a stall on the GPU machine, where no debugger is at hand."""

import faulthandler
import sys

from foundry.cli import main

if __name__ == "__main__":
    faulthandler.dump_traceback_later(float(sys.argv[1]), repeat=True)
    sys.exit(main(sys.argv[2:]))
