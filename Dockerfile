# Gatehouse container image: one static binary, no shell, not root.
# Build with "make docker", which passes VERSION from git describe.
FROM golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Reproducible: no source paths (-trimpath), no VCS stamp (-buildvcs=false;
# .git is not in the context), the version from the build argument only.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/gatehouse/gatehouse/bootstrap.Version=${VERSION}" \
      -o /out/gatehouse ./cmd/gatehouse \
 && mkdir -p /out/data && chown 65532:65532 /out/data && chmod 0700 /out/data

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="Gatehouse" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/gatehouse /gatehouse
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV GATEHOUSE_ADDR=:8080 GATEHOUSE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# No shell in the image: the binary checks itself (GET /api/auth/ok on
# 127.0.0.1, the port from GATEHOUSE_ADDR, no secret or database needed).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/gatehouse", "healthcheck"]
ENTRYPOINT ["/gatehouse"]
CMD ["serve"]
