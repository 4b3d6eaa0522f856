"""What every request passes through: middleware, error answers, limits, logs, health."""
