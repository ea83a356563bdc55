"""Receiving (upstream ``Receiving/``): reading a received message, the input pump and the
delayed messages pump."""
