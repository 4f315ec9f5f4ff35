"""Talking to the Copernicus Climate Data Store, and a local stand-in for it (server, synth)."""
