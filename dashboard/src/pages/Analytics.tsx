import { PageHeader } from '../components/ui';

export function Analytics() {
  return <PageHeader title="Analytics" />;
}
