import Foundation

exit(Bench.main(Array(CommandLine.arguments.dropFirst())))
