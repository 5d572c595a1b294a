"""The dashboard's screens: the leader and agent views and the modal dialogs."""
