# The release image, built by goreleaser (dockers_v2 in goreleaser.yaml) from
# the binaries it already built: the context holds one per platform at
# $TARGETPLATFORM/hubctl. Same base and user as the Dockerfile at the root.
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/hubctl /usr/bin/hubctl
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/bin/hubctl"]
CMD ["serve"]
