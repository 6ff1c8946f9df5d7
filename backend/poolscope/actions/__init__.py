"""Changing server variables safely: validate → SET GLOBAL → read back → audit (→ guard → revert)."""
