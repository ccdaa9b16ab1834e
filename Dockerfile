# syntax=docker/dockerfile:1
#
# hubctl from source: docker build -t hubctl .
#
# A static binary (CGO off, so no libc to match) on distroless/static: CA
# certificates and time zones, no shell, no package manager, running as the
# unprivileged "nonroot" user (65532). Releases build the same image from
# goreleaser's binaries instead (deploy/docker/release.Dockerfile).

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS TARGETARCH
# No .git in the build context (.dockerignore), so the build identity comes in
# as arguments: docker build --build-arg VERSION=$(git describe --tags) ...
ARG VERSION=dev COMMIT=none BUILD_DATE=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    make build VERSION="$VERSION" COMMIT="$COMMIT" BUILD_DATE="$BUILD_DATE"

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/hubctl /usr/bin/hubctl
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/bin/hubctl"]
CMD ["serve"]
