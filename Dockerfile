# reprise as a container image: a static binary (no cgo) on a distroless
# base, run as the unprivileged user 65532. Used by deploy/kubernetes/.
# Without cgo there is no NVML: GPU telemetry uses --gpu-telemetry dcgm.
#
#   docker build -t ghcr.io/reprise-bench/reprise:latest .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/reprise ./cmd/reprise

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reprise /usr/local/bin/reprise
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/reprise"]
