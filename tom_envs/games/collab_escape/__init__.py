"""CollabEscape (paper 002): repair two generators and escape a killer; see ``env.py``."""
