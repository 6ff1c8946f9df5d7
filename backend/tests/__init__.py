from pathlib import Path

# Captured server output per flavor and version, replayed by fixture:// targets (conftest.py
# registers backend/dev/poolscope_dev/replay.py with this directory).
FIXTURES_ROOT = Path(__file__).resolve().parent / "fixtures"
