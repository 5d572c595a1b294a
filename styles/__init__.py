"""Textual CSS for teamdeck (loaded through ``CSS_PATH``)."""
