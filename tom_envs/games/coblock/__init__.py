"""CoBlock: a collaborative 3D blocks world with private goals, inventories and chat (paper 003);
see ``env.py``."""
