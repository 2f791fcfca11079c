# syntax=docker/dockerfile:1

# Build stage: compile the release binary (SQLite is bundled; libpq is linked for PostgreSQL).
FROM rust:1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libpq-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY migrations migrations
COPY benches benches
COPY openapi.yaml ./
RUN cargo build --release --locked --bin kuryr

# Runtime stage: the binary, libpq and curl for the health check, as an unprivileged user.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin kuryr \
    && mkdir -p /data && chown kuryr:kuryr /data
COPY --from=build /src/target/release/kuryr /usr/local/bin/kuryr
USER kuryr
ENV KURYR_DATA_DIR=/data \
    KURYR_LISTEN=0.0.0.0:8080
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["kuryr"]
CMD ["serve"]
