# Moonmock for those who have Docker. (scripts/image builds the same image without a daemon, and
# is what the test suite checks; this file is not run on the project's machines.)
#   docker build -t moonmock .
#   docker run --rm -p 8080:8080 -v "$PWD:/mocks" moonmock            # serves ./mocks.lua, reloads on save
#   docker run --rm -p 8080:8080 moonmock                             # serves the image's example
# Assumes the official swift:6.1-bookworm image (Debian 12, as the runtime below).

FROM swift:6.1-bookworm AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      liblua5.4-dev libnghttp2-dev libssl-dev libcurl4-openssl-dev libyaml-dev zlib1g-dev libbrotli-dev \
      libzstd-dev libhiredis-dev pkg-config patchelf > /dev/null
WORKDIR /src
COPY . .
# scripts/package: the release binary with the libraries it loads, found through its RUNPATH.
RUN swift build -c release --product moonmock -Xswiftc -warnings-as-errors \
 && mkdir -p /opt/moonmock/bin /opt/moonmock/lib \
 && cp .build/release/moonmock /opt/moonmock/bin/ && strip --strip-debug /opt/moonmock/bin/moonmock \
 && ldd /opt/moonmock/bin/moonmock | awk '$3 ~ /^\// {print $1, $3}' | while read -r so path; do \
      case "$so" in linux-vdso*|ld-linux*|libc.*|libm.*|libdl.*|libpthread.*|librt.*|libresolv.*|libstdc++*|libgcc_s*) ;; \
      *) cp -L "$path" /opt/moonmock/lib/ ;; esac; done \
 && patchelf --set-rpath '$ORIGIN/../lib' /opt/moonmock/bin/moonmock \
 && mkdir -p /mocks && cp -R examples/mocks.lua examples/fixtures /mocks/

FROM debian:bookworm-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates \
      protobuf-compiler > /dev/null && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --home-dir /mocks --no-create-home --shell /usr/sbin/nologin moonmock
COPY --from=build /opt/moonmock /opt/moonmock
COPY --from=build --chown=10001:10001 /mocks /mocks
RUN ln -s /opt/moonmock/bin/moonmock /usr/local/bin/moonmock
USER 10001:10001
WORKDIR /mocks
VOLUME /mocks
EXPOSE 8080
LABEL org.opencontainers.image.title="moonmock" org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/moonmock/moonmock"
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["moonmock", "health", "--url", "http://127.0.0.1:8080"]
ENTRYPOINT ["moonmock", "serve"]
# --host 0.0.0.0: reachable from outside the container. The admin API's guards still apply:
# give --admin-token (and the health check MOONMOCK_ADMIN_TOKEN) when the port is not private.
CMD ["mocks.lua", "--host", "0.0.0.0", "--port", "8080"]
