"""Textual widgets for teamdeck. Widgets render state; they never read files or call the model."""
