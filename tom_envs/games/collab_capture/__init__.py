"""CollabCapture ("Catch the Thief", paper 002): two pursuers, doors and a greedy thief; see ``env.py``."""
