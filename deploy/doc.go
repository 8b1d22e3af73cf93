// Package deploy holds the deployment files (deploy/README.md); its tests
// parse every one of them and check them against each other and against
// the platform's source: routes, metric names, configuration keys.
package deploy
