"""The teaching example: two players name a colour and score when they match (see ``env.py``)."""
