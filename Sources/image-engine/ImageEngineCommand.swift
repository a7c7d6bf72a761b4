import ArgumentParser

/// `image-engine`: thumbnails, inspection, upload compression and cache maintenance.
@main
struct ImageEngineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image-engine",
        abstract: "Decode, downsample and encode JPEG and PNG images.",
        discussion: """
            Errors: one line on stderr naming the file or option, or, where a command prints JSON, \
            one JSON record on stdout (see each command's help). Exit status: 0 success, 1 an \
            operation or input failed, 64 a usage mistake.
            """,
        version: ImageEngineCommand.version,
        subcommands: [InspectCommand.self, ThumbnailCommand.self, CompressCommand.self, FetchCommand.self, CacheCommand.self]
    )

    /// The release this tool is built from; printed by `--version`.
    static let version = "0.5.0"
}
