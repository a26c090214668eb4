# Gatehouse container image: one static binary, no shell, not root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/gatehouse/gatehouse/bootstrap.Version=${VERSION}" -o /out/gatehouse ./cmd/gatehouse \
 && mkdir -p /out/data && chown 65532:65532 /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/gatehouse /gatehouse
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV GATEHOUSE_ADDR=:8080 GATEHOUSE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/gatehouse"]
CMD ["serve"]
