import sys
from pathlib import Path

# The tests here import their shared record builders (fabricate.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))
