import sys
from pathlib import Path

# Tests import the harness package from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
