# syntax=docker/dockerfile:1
# The native `everything-mcp` in a small image, used like the reference server's mcp/everything
# (docs/distribution.md, "Container image"):
#
#   docker build -t everything-mcp .
#   docker run --rm -p 3001:3001 everything-mcp     # Streamable HTTP at http://localhost:3001/mcp
#   docker run --rm -i everything-mcp stdio         # stdio, for a client that spawns the container
#   docker run --rm -p 3001:3001 everything-mcp http --host 0.0.0.0 --port 3001 --allow-host '*' --era stateless
#
# Arguments replace the default command below whole, so an HTTP run with flags of its own
# repeats its first ones. No Python in either stage: the binary is built without the `python`
# feature.

FROM rust:1-slim-trixie AS build
WORKDIR /src
COPY . .
# The caches keep the crates and the compiled dependencies from one build to the next; the
# binary is copied out of the target cache, which is not part of the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin everything-mcp \
    && cp target/release/everything-mcp /usr/local/bin/everything-mcp

# The same Debian release as the build stage: the binary links against its glibc.
FROM debian:trixie-slim
COPY --from=build /usr/local/bin/everything-mcp /usr/local/bin/everything-mcp
USER nobody
EXPOSE 3001
ENTRYPOINT ["everything-mcp"]
# 0.0.0.0: inside the container, loopback is not where a published port arrives.
#
# The DNS-rebinding guard accepts a Host naming loopback and, when there is an Origin, a
# loopback origin (src/transport/http/guard.rs). A wildcard bind keeps it so, and the Host a
# client sends is the name it dialled, so a client on the host that uses
# http://localhost:3001/mcp through the published port gets through as it is. A container is
# also reached by names the image cannot know: another container by the service's name on
# their network, another machine by the host's address, a Kubernetes Service by its own. So
# the Host check is widened to any name (`--allow-host '*'`). The Origin check is kept, and
# with it what stops a DNS-rebinding page from acting: a browser sends the page's Origin with
# every request but a GET or HEAD, and every MCP request is a POST, as is every change through
# the control API, so a page of a foreign origin is still refused. What such a page could
# still do is read the control API's GETs (a same-origin GET carries no Origin):
# `--control-token TOKEN` closes those. A browser client served from another origin is let
# in with `--allow-origin ORIGIN`.
CMD ["http", "--host", "0.0.0.0", "--port", "3001", "--allow-host", "*"]
