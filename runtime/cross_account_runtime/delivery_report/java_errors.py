"""Reading the Java exception behind a PySpark error: its cause chain, conditions and trace.

PySpark raises either a ``Py4JJavaError`` (``java_exception``) or a converted exception
holding the Java one as ``_origin``; either way what tells a truncated file from a full disk is
further down the Java cause chain (``FAILED_READ_FILE`` with the file's path, then the
``EOFException``), which Python's message does not show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped]
from pyspark.errors import PySparkException

SPARK_ERRORS: tuple[type[Exception], ...] = (Py4JJavaError, PySparkException)
"""What a call into Spark raises when the JVM side fails."""
MAX_CHAIN = 32
"""Java allows a cause chain to loop back on itself; no real chain is this long."""


@dataclass(frozen=True)
class JavaCause:
    """One exception of a Java cause chain."""

    class_name: str
    message: str
    condition: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """``java.io.EOFException: Unexpected end of input stream`` (first line only)."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.class_name}: {first}" if first else self.class_name


def java_throwable(error: BaseException) -> Any | None:
    """The Java exception behind a PySpark error, or None for a Python-side error."""
    if isinstance(error, Py4JJavaError):
        return error.java_exception
    # Converted exceptions keep the Java one only in this attribute (PySpark has no accessor).
    return getattr(error, "_origin", None)


def cause_chain(error: BaseException) -> list[JavaCause]:
    """The Java exception and its causes, outermost first; empty for a Python-side error."""
    chain: list[JavaCause] = []
    throwable = java_throwable(error)
    while throwable is not None and len(chain) < MAX_CHAIN:
        chain.append(_cause(throwable))
        throwable = throwable.getCause()
    return chain


def root_cause(error: BaseException) -> str:
    """The innermost cause that says something, in one line: what went wrong, not where it
    surfaced (a crashed Python worker ends in an ``EOFException`` without a message)."""
    chain = cause_chain(error)
    if chain:
        telling = [cause for cause in chain if cause.message.strip()] or chain
        return telling[-1].describe()
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def java_trace(spark_jvm: Any, error: BaseException) -> str:
    """The Java stack trace with its causes, as Spark prints it, for the debug log."""
    throwable = java_throwable(error)
    if throwable is None or spark_jvm is None:
        return ""
    return str(getattr(spark_jvm, "org.apache.spark.util.Utils").exceptionString(throwable))


def _cause(throwable: Any) -> JavaCause:
    class_name = str(throwable.getClass().getName())
    message = str(throwable.getMessage() or "")
    try:
        condition = throwable.getCondition()
        parameters = dict(throwable.getMessageParameters())
    except Py4JError:
        # Not a SparkThrowable: py4j finds no such method on a plain Java exception.
        return JavaCause(class_name, message)
    return JavaCause(
        class_name,
        message,
        None if condition is None else str(condition),
        {str(key): str(value) for key, value in parameters.items()},
    )
