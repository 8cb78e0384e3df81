/** Top-level routing: `/` home, `/w/:id` workspace, anything else a not-found page. */
import { HomePage } from '../home/HomePage.tsx';
import { CenteredPage } from '../ui/CenteredPage.tsx';
import { WorkspacePage } from '../workspace/WorkspacePage.tsx';
import { navigate, parseRoute, usePathname } from './router.ts';

export function App() {
  const route = parseRoute(usePathname());
  switch (route.name) {
    case 'home':
      return <HomePage />;
    case 'workspace':
      // Keyed so that switching workspaces tears the previous session down completely.
      return <WorkspacePage key={route.id} id={route.id} />;
    case 'not-found':
      return (
        <CenteredPage title="Page not found">
          <p>
            Nothing lives at <code>{route.path}</code>.
          </p>
          <button className="btn" onClick={() => navigate('/')}>
            All workspaces
          </button>
        </CenteredPage>
      );
  }
}
