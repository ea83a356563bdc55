""".NET rules the released transport, core, the plugins and ServiceControl inherit from their
runtime: UTF-16 strings, time and its text forms, System.Text.Json, ``Guid.Parse`` and the
deterministic GUIDs."""
