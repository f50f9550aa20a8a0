"""What every pytest suite under test/ shares: this folder on sys.path, for the helpers kept here
(onnxruntime_reference.py)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
