import ArgumentParser

/// `image-engine`: thumbnails, inspection, upload compression and cache maintenance.
@main
struct ImageEngineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image-engine",
        abstract: "Decode, downsample and encode JPEG and PNG images.",
        subcommands: [InspectCommand.self, ThumbnailCommand.self, CompressCommand.self, FetchCommand.self, CacheCommand.self]
    )
}
