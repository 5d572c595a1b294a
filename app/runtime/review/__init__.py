"""Review: what an edit would change and what a teammate changed so far, as diffs from git
(``diffs``), and the person's notifications (``notify``)."""
