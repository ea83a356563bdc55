"""Internals the constructs share (as aws-cdk-lib's ``lib/private/``): not part of the API.

Nothing here is exported; a consumer imports the constructs from :mod:`constructs_lib`.
"""
